"""pcap in and out: a run's delivered packets captured, that capture replayed as a chain's traffic and captured
again; the same frames come out, in order, and a replay without loop ends with its last frame."""

from __future__ import annotations

import json

from conftest import requires_root, tandem
from controlplane.spec.pcap_file import read_pcap

pytestmark = requires_root

SOURCE = """\
name: source
duration: 0.5
warmup: 0.1
traffic: {rate: 20 kpps, flows: 16, http: {malicious: 0.25}}
scheduler: coop
chains: [{name: c, nfs: [{name: check, type: checkip, core: 1}]}]
"""
# 20 kpps is far below what one light NF takes on any host: nothing queues, so nothing is lost.
REPLAY = """\
name: replay
duration: 0.5
warmup: 0.1
traffic: {rate: 20 kpps, pcap: PCAP, loop: false}
scheduler: coop
chains: [{name: c, nfs: [{name: check, type: checkip, core: 1}, {name: urls, type: count_url, core: 1}]}]
"""


def replay_through(*nfs: str) -> str:
    """REPLAY with the chain's NFs given, each a YAML mapping of name, type and args (put on core 1)."""
    lines = "".join(f"      - {{{nf}, core: 1}}\n" for nf in nfs)
    return REPLAY.split("chains:")[0] + "chains:\n  - name: c\n    nfs:\n" + lines


def run(spec_path, tmp_path, *extra) -> dict:
    out = tmp_path / "results.json"
    result = tandem("run", str(spec_path), "--json", str(out), "--quiet", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


def test_a_capture_replayed_and_captured_again_gives_the_same_frames(write_spec, tmp_path, machine_before):
    first, second = tmp_path / "first.pcap", tmp_path / "second.pcap"
    results = run(write_spec(SOURCE), tmp_path, "--capture", str(first), "--capture-limit", "100")
    assert results["capture"]["packets"] == 100
    captured = read_pcap(first).packets
    assert len(captured) == 100 and all(b"HTTP/1.1" in frame for frame in captured)

    results = run(write_spec(REPLAY.replace("PCAP", str(first))), tmp_path, "--capture", str(second))
    chain = results["chains"][0]
    assert chain["generated"] == 100  # loop: false: the capture once, then nothing
    assert chain["delivered"] == 100 and results["accounting"]["exact"]
    assert read_pcap(second).packets == captured
    urls = results["nfs"][1]["report"]
    assert sum(entry["requests"] for entry in urls["top"]) + urls["untracked_requests"] <= 100 and urls["not_http"] == 0


def test_a_file_that_is_no_capture_is_refused_naming_the_field(write_spec, tmp_path):
    (tmp_path / "notes.txt").write_text("not a capture")
    result = tandem("run", str(write_spec(REPLAY.replace("PCAP", str(tmp_path / "notes.txt")))), "--quiet")
    assert result.returncode == 2
    assert "traffic.pcap" in result.stderr and "no pcap magic" in result.stderr and "Traceback" not in result.stderr
    unwritable = tandem(
        "run", str(write_spec(SOURCE)), "--capture", str(tmp_path / "no" / "such" / "dir.pcap"), "--quiet"
    )
    assert unwritable.returncode == 2 and "cannot write" in unwritable.stderr


def test_a_url_that_is_not_utf8_is_reported_escaped_with_the_others(write_spec, tmp_path, machine_before):
    # One attacker's bytes in a URL once made count_url's whole report unwritable, and the run said nothing.
    first, hostile = tmp_path / "first.pcap", tmp_path / "hostile.pcap"
    run(write_spec(SOURCE), tmp_path, "--capture", str(first), "--capture-limit", "20")
    data = bytearray(first.read_bytes())
    at = data.find(b"GET /")
    while at >= 0:  # every request's URL: same length, so the records and the IPv4 checksums stay valid
        if b" " not in data[at + 5 : at + 7]:  # "/" alone would lose the space that ends it
            data[at + 5 : at + 7] = b"\xff\xfe"
        at = data.find(b"GET /", at + 1)
    hostile.write_bytes(bytes(data))
    results = run(write_spec(REPLAY.replace("PCAP", str(hostile))), tmp_path)
    assert results["chains"][0]["delivered"] == 20 and results["accounting"]["exact"]
    assert not results["warnings"], results["warnings"]
    urls = results["nfs"][1]["report"]
    assert urls["urls"] >= 1 and urls["not_http"] == 0, urls
    assert sum(entry["url"].startswith("/\\xff\\xfe") for entry in urls["top"]) >= len(urls["top"]) - 1, urls["top"]
