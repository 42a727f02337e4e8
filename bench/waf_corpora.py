"""Writes the corpora bench/waf_detection.py judges validate_url's engines on (bench/corpora/), from their sources.

Attacks: the requests sqlmap (the widely used SQL-injection scanner, from PyPI, pinned) sends at its most thorough
settings (--level 5 --risk 3, and every UNION test, not its reduced set), one run per technique, against a local
server whose page never changes (so sqlmap finds nothing and tries every payload it has); sqlmap's random tokens are
seeded, so a run writes the same corpus. Of what it sends, only the requests whose `id` carries a payload are
attacks: its first request (id=1), its random-value checks (another bare integer) and its WAF probe (id=1 and a
second parameter) are left out.

Benign: real URLs to real sites, as a browser sends them (path and query, WHATWG's percent-encoding), from the links
of Debian's documentation packages (Python, Rust, Racket, Qt, Linux, SciPy, pandas, scikit-learn, Sphinx, Django,
LibreOffice, Erlang, PostgreSQL, Node.js, GHC, R, Cargo, Octave, OpenJDK, MediaWiki) and the pages yt-dlp's
extractor tests fetch (PyPI); hosts that are no real site (example.*, localhost, addresses) and templates left out.
Each line says where it came from; bench/corpora/benign-urls.manifest names each package's version.

Usage: .venv/bin/python bench/waf_corpora.py [--only attacks|benign]   (a few minutes; needs PyPI and Debian's
archive, and root for apt-get)"""

from __future__ import annotations

import argparse
import ast
import gzip
import html
import http.server
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import venv
from pathlib import Path
from urllib.parse import quote, unquote_plus, urlsplit

CORPORA = Path(__file__).resolve().parent / "corpora"
SQLMAP = "sqlmap==1.10.10"
TECHNIQUES = "BEUSTQ"  # boolean, error, union, stacked, time-based, inline queries
PAGE = b"<html><head><title>Item</title></head><body><h1>item 1</h1><p>A product page. In stock.</p></body></html>\n"
DOC_PACKAGES = ["python3.11-doc", "rust-doc", "racket-doc", "qtbase5-doc-html", "linux-doc-6.1", "python-scipy-doc",
                "python-pandas-doc", "python-sklearn-doc", "sphinx-doc", "python-django-doc", "libreoffice-help-en-us",
                "erlang-doc", "postgresql-doc-15", "nodejs-doc", "ghc-doc", "r-doc-html", "cargo-doc", "octave-doc",
                "openjdk-17-doc", "mediawiki"]  # fmt: skip
YT_DLP = "yt-dlp==2026.10.26"
HREF = re.compile(r"""\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
NOT_A_SITE = re.compile(r"(^|\.)(example\.(com|org|net)|localhost|test|invalid|local|example)$|^[\d.]+$|^\[", re.I)
TEMPLATE = re.compile(r"%[sdr(]|\{[^}]*\}|\$\{|\$[A-Za-z_]")
# What WHATWG's URL serialiser leaves as it is in a path and in a query (the rest, non-ASCII as UTF-8, goes %XX).
PATH_SAFE = "!$%&'()*+,-./:;=@[\\]^_|~"
QUERY_SAFE = "!$%&()*+,-./:;=?@[\\]^_`{|}~"
SEEDED_SQLMAP = "import random, sys\nrandom.seed(0)\nfrom sqlmap.sqlmap import main\nsys.argv[0] = 'sqlmap'\nmain()\n"


def request_targets_seen(technique: str, python: Path, work: Path) -> list[str]:
    """Every request target sqlmap sent in one run of `technique`, in order, as received (percent-encoded)."""
    seen: list[str] = []

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the handler's name is http.server's
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/item.php?id=1"
        command = [str(python), str(work / "seeded_sqlmap.py"), "-u", url, "--batch", "--level", "5", "--risk", "3",
                   f"--technique={technique}", "--flush-session", "--time-sec", "1", "--threads", "1", "-p", "id",
                   "--answers=reduce=N", "--output-dir", str(work / technique)]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False,
                              env={**os.environ, "PYTHONHASHSEED": "0"})  # fmt: skip
        if done.returncode != 0:
            sys.exit(f"sqlmap ({technique}) failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    finally:
        server.shutdown()
    return seen


def carries_payload(target: str) -> bool:
    query = target.partition("?")[2]
    params = [(unquote_plus(k), unquote_plus(v)) for k, _, v in (p.partition("=") for p in query.split("&") if p)]
    values = [v for k, v in params if k == "id"]
    if len(values) != 1:
        return True
    if values[0] == "1":
        return False  # the original request, or the WAF probe beside it
    return not re.fullmatch(r"-?\d+", values[0])  # a bare integer: a random-value check


def write_attacks() -> None:
    with tempfile.TemporaryDirectory(prefix="tandem-sqlmap-") as folder:
        work = Path(folder)
        venv.create(work / "venv", with_pip=True)
        python = work / "venv" / "bin" / "python"
        subprocess.run([str(python), "-m", "pip", "install", "-q", SQLMAP], check=True, timeout=600)
        (work / "seeded_sqlmap.py").write_text(SEEDED_SQLMAP)
        lines = []
        for technique in TECHNIQUES:
            started = time.monotonic()
            sent = request_targets_seen(technique, python, work)
            attacks = list(dict.fromkeys(t for t in sent if carries_payload(t)))
            print(f"{technique}: {len(sent)} requests, {len(attacks)} distinct attacks "
                  f"({time.monotonic() - started:.0f} s)", flush=True)  # fmt: skip
            lines += [f"{technique}\t{target}\n" for target in attacks]
    CORPORA.mkdir(exist_ok=True)
    (CORPORA / "sqlmap-attacks.tsv.gz").write_bytes(gzip.compress("".join(lines).encode(), 9, mtime=0))


def request_target(url: str) -> str | None:
    """What a browser puts on the request line for `url` (origin form), or None for no real site's URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or "." not in host or NOT_A_SITE.search(host):
        return None
    target = quote(parts.path or "/", safe=PATH_SAFE) + (
        "?" + quote(parts.query, safe=QUERY_SAFE) if parts.query else ""
    )
    return target if target.isascii() and target.isprintable() and " " not in target else None


def links_in(root: Path) -> list[str]:
    """The absolute http(s) links of every HTML page under `root` (gzipped or not)."""
    links = []
    for page in sorted(root.rglob("*")):
        name = page.name.removesuffix(".gz")
        if page.is_symlink() or not page.is_file() or not name.endswith((".html", ".htm", ".xhtml")):
            continue
        data = page.read_bytes()
        text = (gzip.decompress(data) if page.name.endswith(".gz") else data).decode("utf-8", "replace")
        for match in HREF.finditer(text):
            link = html.unescape(match.group(1) if match.group(1) is not None else match.group(2)).strip()
            if link.lower().startswith(("http://", "https://")):
                links.append(link)
    return links


def extractor_test_urls(root: Path) -> list[str]:
    """The `url` of every test of yt-dlp's extractors (_TESTS, _WEBPAGE_TESTS, _TEST): real pages of real sites."""
    urls = []
    for source in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(source.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
            if not isinstance(node, ast.Assign) or not {"_TESTS", "_WEBPAGE_TESTS", "_TEST"} & set(names):
                continue
            for entry in ast.walk(node.value):
                if isinstance(entry, ast.Dict):
                    urls += [v.value for k, v in zip(entry.keys, entry.values, strict=True)
                             if isinstance(k, ast.Constant) and k.value == "url" and isinstance(v, ast.Constant)
                             and isinstance(v.value, str) and not TEMPLATE.search(v.value)]  # fmt: skip
    return urls


def write_benign() -> None:
    lines, manifest = {}, []
    with tempfile.TemporaryDirectory(prefix="tandem-benign-") as folder:
        work = Path(folder)
        subprocess.run(["apt-get", "download", *DOC_PACKAGES], cwd=work, check=True, timeout=1800)
        for package in sorted(work.glob("*.deb")):
            fields = subprocess.run(["dpkg-deb", "-f", str(package), "Package", "Version"], capture_output=True,
                                    text=True, check=True).stdout.split()  # fmt: skip
            name, version = fields[1], fields[3]
            manifest.append(f"debian {name} {version}")
            tree = work / name
            subprocess.run(["dpkg-deb", "-x", str(package), str(tree)], check=True, timeout=600)
            for link in links_in(tree):
                lines.setdefault(f"deb:{name}", {}).setdefault(request_target(link), None)
            subprocess.run(["rm", "-rf", str(tree)], check=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(work), YT_DLP],
                       check=True, timeout=600)  # fmt: skip
        wheel = next(work.glob("yt_dlp-*.whl"))
        subprocess.run([sys.executable, "-m", "zipfile", "-e", str(wheel), str(work / "yt-dlp")], check=True)
        manifest.append(f"pypi {YT_DLP.replace('==', ' ')}")
        for url in extractor_test_urls(work / "yt-dlp" / "yt_dlp"):
            lines.setdefault("pypi:yt-dlp", {}).setdefault(request_target(url), None)
    seen, out = set(), []
    for source in sorted(lines):
        for target in lines[source]:
            if target is not None and target not in seen:
                seen.add(target)
                out.append(f"{source}\t{target}\n")
    print(f"benign: {len(out)} distinct request targets, {sum('?' in line for line in out)} with a query", flush=True)
    CORPORA.mkdir(exist_ok=True)
    (CORPORA / "benign-urls.tsv.gz").write_bytes(gzip.compress("".join(out).encode(), 9, mtime=0))
    (CORPORA / "benign-urls.manifest").write_text("\n".join(manifest) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["attacks", "benign"], help="write one corpus only")
    args = parser.parse_args()
    if args.only != "benign":
        write_attacks()
    if args.only != "attacks":
        write_benign()


if __name__ == "__main__":
    main()
