"""The results tables and figures in the docs, made from bench/results/ so that they cannot drift.

Every results table in README.md and docs/ sits between `<!-- table: NAME -->` and `<!-- /table -->`, and a number
quoted in a sentence between `<!-- value: NAME -->` and `<!-- /value -->`. This script renders each NAME from the
files the benchmarks write: the .md table a benchmark prints, made from the same runs as the .json.gz beside it, by
the benchmark's own code. It then writes the docs again; with --check it changes nothing and exits 1 naming each
table that differs. The benchmarks call update() after they save a result (bench/experiment_support.py), so a
result measured again reaches the docs at once.

Usage: .venv/bin/python bench/docs_tables.py [--check | --list]

--check also fails on a link of README.md or docs/ that leads nowhere, and on a README longer than 300 lines.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import posixpath
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = "bench/results"
# A marker's name is lower case (`<!-- table: NAME -->` in prose is no marker); its body holds no other marker.
MARKER = re.compile(
    r"<!-- (table|value): ([a-z0-9][a-z0-9.-]*) -->((?:(?!<!-- (?:table|value):).)*?)<!-- /\1 -->", re.S
)
OPENING = re.compile(r"<!-- (table|value): ([a-z0-9][a-z0-9.-]*) -->")
DASHES = re.compile(r"-+(?:  +-+)*")


# --- the benchmarks' text tables ---------------------------------------------------------------------------------


@dataclass
class TextTable:
    """One aligned table of a results file (as controlplane's terminal tables print it: a header, a line of dashes per
    column)."""

    headers: list[str]
    rows: list[list[str]]

    def column(self, name: str) -> int:
        if name not in self.headers:
            raise KeyError(f"no column {name!r} (columns: {', '.join(self.headers)})")
        return self.headers.index(name)

    def row(self, *key: str) -> list[str]:
        """The first row whose leading cells are `key`."""
        for row in self.rows:
            if row[: len(key)] == list(key):
                return row
        raise KeyError(f"no row {' / '.join(key)!r}")

    def cell(self, key: str | tuple[str, ...], column: str) -> str:
        return self.row(*((key,) if isinstance(key, str) else key))[self.column(column)]


@dataclass
class ResultFile:
    """A results file as the docs use it: its description (its first lines, up to a blank line or a table), its
    tables, and its notes (the other lines after the first table, as printed: verdicts, totals)."""

    name: str
    text: str
    description: list[str] = field(default_factory=list)
    tables: list[TextTable] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def table(self, index: int = 0) -> TextTable:
        if index >= len(self.tables):
            raise KeyError(f"{self.name} has {len(self.tables)} tables, not {index + 1}")
        return self.tables[index]

    def note(self, pattern: str, group: int = 1) -> str:
        """Group `group` of the first match of `pattern` in the file's text."""
        found = re.search(pattern, self.text)
        if not found:
            raise KeyError(f"{self.name}: nothing matches {pattern!r}")
        return found.group(group)


def cells(line: str, starts: list[int]) -> list[str]:
    bounds = starts[1:] + [max(len(line), starts[-1]) + 1]
    return [line[a:b].strip() for a, b in zip(starts, bounds, strict=True)]


def fits(line: str, spans: list[tuple[int, int]]) -> bool:
    """Whether a line is a row of the table with these column spans: no longer, and blank between the columns."""
    if not line.strip() or len(line) > spans[-1][1]:
        return False
    return all(not line[end:start].strip() for (_, end), (start, _) in zip(spans, spans[1:], strict=False))


def parse(name: str, text: str) -> ResultFile:
    lines = [line for line in text.splitlines() if not line.startswith("```")]
    found = ResultFile(name, text)
    headers = {i - 1 for i, line in enumerate(lines) if i > 0 and DASHES.fullmatch(line)}
    for index, line in enumerate(lines):
        if not line.strip() or index in headers:
            break
        if not line.startswith("tandem: "):  # the command's progress line (primitives.txt)
            found.description.append(line.strip())
    index = 0
    while index < len(lines):
        if index in headers:
            spans = [m.span() for m in re.finditer(r"-+", lines[index + 1])]
            starts = [start for start, _ in spans]
            table = TextTable(cells(lines[index], starts), [])
            index += 2
            while index < len(lines) and index not in headers and fits(lines[index], spans):
                table.rows.append(cells(lines[index], starts))
                index += 1
            found.tables.append(table)
            continue
        if found.tables and lines[index].strip():
            found.notes.append(lines[index].rstrip())
        index += 1
    return found


def filename(name: str) -> str:
    """A results file's name: NAME.md, or NAME itself where it has an extension (primitives.txt)."""
    return name if "." in name else f"{name}.md"


READ: set[str] = set()  # the results files read since it was last cleared (for --list)


def result(name: str, root: Path = REPO) -> ResultFile:
    """bench/results/NAME.md, or the file NAME itself where it has an extension (primitives.txt)."""
    READ.add(filename(name))
    return parsed(filename(name), root)


@functools.cache
def parsed(name: str, root: Path) -> ResultFile:
    return parse(name, (root / RESULTS / name).read_text())


# --- rendering ---------------------------------------------------------------------------------------------------

NUMERIC = re.compile(r"[-+±−]?[\d.]")


def markdown(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A GitHub table; a column whose cells all start like numbers is right-aligned."""

    def clean(cell: str) -> str:
        return re.sub(r"\s+", " ", cell).replace("|", "\\|")

    right = [
        all(NUMERIC.match(r[i]) or r[i] in ("", "-", "n/a", "failed") for r in rows) and any(r[i] for r in rows)
        for i in range(len(headers))
    ]
    lines = [
        "| " + " | ".join(clean(h) for h in headers) + " |",
        "|" + "|".join("---:" if r else "---" for r in right) + "|",
    ]
    lines += ["| " + " | ".join(clean(c) for c in row) + " |" for row in rows]
    return lines


@dataclass
class Rendered:
    lines: list[str]
    sources: list[str]  # the files named below the table
    cite: bool = True  # False: no source line (notes right below their file's table)


def source_line(files: list[str], page: str, root: Path) -> str:
    """Where a table comes from, linked from the page, with the file's own description of the runs."""
    here = posixpath.dirname(page)
    links = []
    for name in files:
        link = f"[`{RESULTS}/{filename(name)}`]({posixpath.relpath(f'{RESULTS}/{filename(name)}', here or '.')})"
        runs = f"{filename(name).rsplit('.', 1)[0]}.json.gz"
        if (root / RESULTS / runs).exists():
            link += f" (every run: [`{runs}`]({posixpath.relpath(f'{RESULTS}/{runs}', here or '.')}))"
        links.append(link)
    description = "; ".join(line.rstrip(".;") for line in result(files[0], root).description)
    return f"Source: {', '.join(links)}: {description}."


def whole(
    name: str, index: int = 0, where: Callable[[list[str]], bool] = lambda row: True
) -> Callable[[Path], Rendered]:
    """Table `index` of bench/results/NAME, every column, the rows `where` keeps (all by default)."""

    def render(root: Path) -> Rendered:
        source = result(name, root).table(index)
        return Rendered(markdown(source.headers, [row for row in source.rows if where(row)]), [name])

    return render


def notes(name: str, match: str = "") -> Callable[[Path], Rendered]:
    """The file's verdict lines (those containing `match`) as a list, to go right below the file's table."""

    def render(root: Path) -> Rendered:
        found = [
            f"{'  ' if line.startswith(' ') else ''}- {line.strip()}"
            for line in result(name, root).notes
            if match in line
        ]
        if not found:
            raise KeyError(f"{name}: no note contains {match!r}")
        return Rendered(found, [name], cite=False)  # right below the file's table, which names the source

    return render


def verbatim(name: str) -> Callable[[Path], Rendered]:
    """The whole file, as the benchmark printed it."""

    def render(root: Path) -> Rendered:
        body = [line for line in result(name, root).text.splitlines() if not line.startswith("```")]
        return Rendered(["```"] + body + ["```"], [name])

    return render


def port_costs_table(root: Path) -> TextTable:
    """build/port-costs prints its table without a line of dashes: columns split at two spaces or more."""
    block = result("port-costs", root).text.split("```")[1].strip().splitlines()
    headers, *rows = [re.split(r"\s{2,}", line.strip()) for line in block]
    return TextTable(headers, rows)


def port_costs(root: Path) -> Rendered:
    table = port_costs_table(root)
    return Rendered(markdown(table.headers, table.rows), ["port-costs"])


def per_nf_fairness(root: Path) -> Rendered:
    return whole(
        "nfvnice-fairness",
        1,
        where=lambda r: r[0] in ("heterogeneous-even", "skewed-even") and r[1] in ("cfs", "nfvnice"),
    )(root)


TABLES: dict[str, Callable[[Path], Rendered]] = {
    # platform
    "profile-spread": whole("profile-spread"),
    "fault-soak": whole("fault-soak"),
    "generator-capacity": whole("generator-capacity"),
    "three-light": whole("three-light"),
    "chain-length": whole("chain-length"),
    "ab-pool": whole("pool-lf-stack-ab"),
    "ab-ports": whole("ports-ab"),
    "ab-reshape": whole("reshape-ab"),
    # NFs against attackers
    "waf-detection": whole("waf-detection", 0),
    "waf-detection-sources": whole("waf-detection", 1),
    "fuzzing": whole("fuzzing"),
    # UNiS
    "unis-chain-length": whole("unis-chain-length"),
    "unis-chain-length-targets": notes("unis-chain-length"),
    "unis-capacity": whole("unis-capacity"),
    "unis-capacity-targets": notes("unis-capacity"),
    "unis-slice-start": whole("unis-slice-start"),
    "unis-sampling": whole("unis-sampling"),
    "unis-heterogeneous": whole("unis-heterogeneous"),
    "unis-multiple-chains": whole("unis-multiple-chains"),
    "unis-occupancy": whole("unis-occupancy"),
    "unis-latency": whole("unis-latency", 0),
    "unis-switches": whole("unis-latency", 1),
    "unis-external": whole("unis-external"),
    "unis-low-load": whole("unis-low-load"),
    "unis-light-chain-compare": whole("unis-light-chain-compare"),
    "control-core-waits": whole("control-core-waits"),
    # auto
    "placement-scale": whole("placement-scale"),
    "operator-scale": whole("operator-scale"),
    "operator-heal": whole("operator-heal"),
    "kubelet-heal": whole("kubelet-heal"),
    "wire-link": whole("wire-link"),
    "auto-goal": whole("auto-goal"),
    "auto-idle": whole("auto-idle"),
    "auto-timeline-layouts-decisions": notes("auto-timeline-layouts", " s: "),
    "auto-latency": whole("auto-latency"),
    "auto-latency-policies": whole("auto-latency", 1),
    "auto-latency-policies-p50": whole("auto-latency", 2),
    "latency-model": whole("latency-model"),
    "auto-mixed-native": whole("auto-mixed", 0),
    "auto-mixed-testpmd": whole("auto-mixed", 1),
    # NFVnice
    "nfvnice-fairness": whole("nfvnice-fairness", 0),
    "nfvnice-fairness-per-nf": per_nf_fairness,
    "nfvnice-wasted-work": whole("nfvnice-wasted-work"),
    "nfvnice-wasted-work-targets": notes("nfvnice-wasted-work"),
    "nfvnice-two-nf-chains": whole("nfvnice-two-nf-chains"),
    "nfvnice-density": whole("nfvnice-density"),
    # Bubble
    "bubble-table1": whole("bubble-table1"),
    "bubble-table1-targets": notes("bubble-table1", "target"),
    "bubble-colocated": whole("bubble-colocated"),
    "bubble-chain": whole("bubble-chain"),
    "bubble-priorities": whole("bubble-priorities"),
    "bubble-load": whole("bubble-load"),
    "bubble-adaptation": whole("bubble-adaptation"),
    # SCC
    "scc-capacity": whole("scc-capacity"),
    "primitives": whole("primitives.txt", 0),
    "primitives-memory": whole("primitives.txt", 1),
    "scc-fig8": whole("scc-fig8"),
    "scc-fig9": whole("scc-fig9", 0),
    "scc-fig9-contention": whole("scc-fig9", 1),
    "scc-fig10": whole("scc-fig10", 0),
    "scc-fig10-contention": whole("scc-fig10", 1),
    "scc-dpdk": whole("scc-dpdk", 0),
    "scc-mixed": whole("scc-mixed", 0),
    "scc-mixed-contention": whole("scc-mixed", 1),
    # μNF
    "port-costs": port_costs,
    "micronf-fig7": whole("micronf-fig7"),
    "micronf-fig8": whole("micronf-fig8"),
    "micronf-fig9": whole("micronf-fig9"),
    "micronf-table1": whole("micronf-table1"),
    "micronf-fig10": whole("micronf-fig10"),
    "micronf-fig10-cores": whole("micronf-fig10-cores", 0),
    "micronf-fig10-cores-runs": whole("micronf-fig10-cores", 1),
    "micronf-fig11": whole("micronf-fig11"),
    "micronf-fig11-coop": whole("micronf-fig11-coop"),
    "micronf-scale-timeline": verbatim("micronf-scale-timeline"),
    # results measured before a change that moves them (STALE, below)
    "stale-results": lambda root: stale_results(root),
    # real traffic
    "lab-kernel": whole("lab-kernel", 1),
    # the service
    "live-changes": whole("live-changes"),
    "live-relayout": whole("live-relayout"),
    "live-relayout-drops": notes("live-relayout", "dropped"),
    "service-soak": whole("service-soak"),
    "service-soak-notes": notes("service-soak"),
    # the papers' promises as properties
    "property-suite": whole("property-suite"),
    # the profiler
    "profiler-three-firewalls": whole("profiler-three-firewalls", 0),
    "profiler-light-chain": whole("profiler-light-chain", 0),
    "profiler-cost": whole("profiler-cost"),
    "profiler-kernel-table4": whole("profiler-kernel-table4"),
}


# --- single values quoted in sentences ---------------------------------------------------------------------------


def number(text: str) -> float:
    """The first number in a cell as printed ("0.010 (0%)" -> 0.01, "6,204" -> 6204, "59%" -> 59)."""
    found = re.search(r"-?[\d,]*\.?\d+", text)
    if not found:
        raise ValueError(f"not a number: {text!r}")
    return float(found.group(0).replace(",", ""))


def first_number(text: str) -> str:
    """The first number in a cell, as printed."""
    found = re.search(r"-?[\d,]*\.?\d+", text)
    if not found:
        raise ValueError(f"not a number: {text!r}")
    return found.group(0)


def table_of(root: Path, name: str, index: int) -> TextTable:
    return port_costs_table(root) if name == "port-costs" else result(name, root).table(index)


def cell(
    name: str, key: str | tuple[str, ...], column: str, index: int = 0, part: Callable[[str], str] = lambda text: text
) -> Callable[[Path], str]:
    """One cell as printed, or `part` of it."""
    return lambda root: part(table_of(root, name, index).cell(key, column))


def note(name: str, pattern: str) -> Callable[[Path], str]:
    """What the first group of `pattern` matches in the file's text."""
    return lambda root: result(name, root).note(pattern)


def share(
    name: str, a: tuple, b: tuple, index: int = 0, digits: int = 0, factor: bool = False
) -> Callable[[Path], str]:
    """cell a / cell b (each a (row key, column) pair) as a percentage, or a factor ("1.6×")."""

    def value(root: Path) -> str:
        table = table_of(root, name, index)
        quotient = number(table.cell(*a)) / number(table.cell(*b))
        return f"{quotient:.{digits}f}×" if factor else f"{quotient * 100:.{digits}f} %"

    return value


def span(
    name: str,
    column: str,
    where: Callable[[dict], bool] = lambda row: True,
    index: int = 0,
    digits: int | None = None,
    suffix: str = "",
) -> Callable[[Path], str]:
    """The lowest and highest of one column over the rows `where` keeps: "a–b" (as printed, or to `digits`)."""

    def value(root: Path) -> str:
        table = table_of(root, name, index)
        cells = [row[table.column(column)] for row in table.rows if where(dict(zip(table.headers, row, strict=False)))]
        if not cells:
            raise KeyError(f"{name}: no row to take {column!r} from")
        values = sorted(cells, key=number)
        low, high = (
            (f"{number(v):.{digits}f}" for v in (values[0], values[-1]))
            if digits is not None
            else (first_number(values[0]), first_number(values[-1]))
        )
        return (low if low == high else f"{low}–{high}") + suffix

    return value


def total(
    name: str, column: str, where: Callable[[dict], bool], index: int = 0, digits: int = 2
) -> Callable[[Path], str]:
    """The sum of one column over the rows `where` keeps."""

    def value(root: Path) -> str:
        table = table_of(root, name, index)
        rows = [dict(zip(table.headers, row, strict=False)) for row in table.rows]
        kept = [number(row[column]) for row in rows if where(row)]
        if not kept:
            raise KeyError(f"{name}: no row to add {column!r} over")
        return f"{sum(kept):.{digits}f}"

    return value


def shares_span(name: str, over: str, under: str, keys: list[str], index: int = 0) -> Callable[[Path], str]:
    """The lowest and highest of column `over` / column `under` over the rows `keys`, as percentages."""

    def value(root: Path) -> str:
        table = table_of(root, name, index)
        found = sorted(number(table.cell(k, over)) / number(table.cell(k, under)) * 100 for k in keys)
        low, high = f"{found[0]:.0f}", f"{found[-1]:.0f}"
        return f"{low} %" if low == high else f"{low}–{high} %"

    return value


def case(name: str, scheduler: str) -> Callable[[dict], bool]:
    return lambda row: row["case"] == name and row["scheduler"] == scheduler


# A result produced by code older than what the docs describe. The note shows while the file is the one measured
# then (by its SHA-256); measured again, the file changes and the note goes.
# Why a result with nfvnice rows on chains of several NFs is stale until measured again.
NFVNICE_PRODUCER_THROTTLE = (
    "its nfvnice rows (chains of several NFs) measured before NFVnice's backpressure came to throttle only a "
    "congested ring's producer (14fb3a3, the new default); re-measure with "
)
STALE = {
    "fault-soak": (
        "11a2e59b49da4612",
        "measured at f0914a0 (2026-11-23), before the lock-free mbuf pool (16e11fc) and "
        'the soak\'s "killed inside a free" column; re-measure with `.venv/bin/python bench/fault_soak.py`',
    ),
    "three-light": (
        "a5c445e32aedffcd",
        "measured at d5584e0 (2026-11-21), before the template generator (d0a32f2) and "
        "the lock-free mbuf pool (16e11fc); re-measure with "
        "`.venv/bin/python bench/run_benchmarks.py --only three-light`",
    ),
    "chain-length": (
        "66ef9af37e1ddfe9",
        "measured at d5584e0 (2026-11-21), before the template generator (d0a32f2) and "
        "the lock-free mbuf pool (16e11fc); re-measure with "
        "`.venv/bin/python bench/run_benchmarks.py --only chain-length`",
    ),
    "lab-kernel": (
        "6501cc96666895cf",
        NFVNICE_PRODUCER_THROTTLE + "`.venv/bin/python bench/lab_experiments.py`",
    ),
}


def is_stale(name: str, root: Path) -> bool:
    READ.add(filename(name))
    return hashlib.sha256((root / RESULTS / filename(name)).read_bytes()).hexdigest().startswith(STALE[name][0])


def stale(name: str) -> Callable[[Path], str]:
    return lambda root: f"**Stale:** {STALE[name][1]}." if is_stale(name, root) else ""


def stale_results(root: Path) -> Rendered:
    """Every result still marked stale, or a line saying there is none."""
    found = [f"- `{RESULTS}/{filename(name)}`: {text}." for name, (_, text) in STALE.items() if is_stale(name, root)]
    return Rendered(
        found or ["- None: every result was measured with the code these pages describe."], list(STALE), cite=False
    )


VALUES: dict[str, Callable[[Path], str]] = {f"stale.{name}": stale(name) for name in STALE}
FW = "firewalls (light)"
THREE_FIREWALLS = "profiler-three-firewalls"
VALUES.update(
    {
        # overview, platform
        "noise.percent": note("pool-lf-stack-ab", r"vary by \+-(\d+) %"),
        "generator-capacity.mpps": cell("generator-capacity", "rtc", "Mpps"),
        "three-light.verdict": note("three-light", r"target coop >= 50 % of rtc: (\w+ \(\d+%\))"),
        "chain-length.rr-2": cell("chain-length", "2", "rr", part=first_number),
        "chain-length.rr-8": cell("chain-length", "8", "rr", part=first_number),
        # UNiS
        "unis-capacity.us-per-switch": span("unis-capacity", "us/switch"),
        "unis-slice-start.light3-decision": cell(
            "unis-slice-start", ("light, 3 NFs", "unis (from decision)"), "turns ended by the slice"
        ),
        "unis-slice-start.light3-progress": cell(
            "unis-slice-start", ("light, 3 NFs", "unis (from progress)"), "turns ended by the slice"
        ),
        "unis-occupancy.off-on-125": cell("unis-occupancy", "125%", "off/on"),
        "unis-external.vs-cfs": cell("unis-external", "unis / cfs with testpmd", "Mpps"),
        "unis-light-chain-compare.rounds": note(
            "unis-light-chain-compare", r"unis / coop, round by round: ([0-9., ]+);"
        ),
        "unis-light-chain-compare.median": note("unis-light-chain-compare", r"; median ([0-9.]+) \("),
        # NFVnice
        "nfvnice-density.upstream-kernel": cell("nfvnice-density", "nfvnice, throttle: upstream (the paper)", "kernel"),
        "nfvnice-density.producer-kernel": cell("nfvnice-density", "nfvnice", "kernel"),
        "nfvnice.hetero-cpu-500": cell(
            "nfvnice-fairness", ("heterogeneous-even", "nfvnice", "nf1-500"), "CPU", index=1
        ),
        "nfvnice.hetero-total": total("nfvnice-fairness", "out Mpps", case("heterogeneous-even", "nfvnice"), index=1),
        "nfvnice.hetero-total-cfs": total("nfvnice-fairness", "out Mpps", case("heterogeneous-even", "cfs"), index=1),
        "nfvnice.skewed-cpu-2000": cell("nfvnice-fairness", ("skewed-even", "nfvnice", "nf1-2000"), "CPU", index=1),
        "nfvnice.skewed-total": total("nfvnice-fairness", "out Mpps", case("skewed-even", "nfvnice"), index=1),
        "nfvnice.skewed-total-cfs": total("nfvnice-fairness", "out Mpps", case("skewed-even", "cfs"), index=1),
        # Bubble
        "bubble-table1.rtc-vs-k0": share(
            "bubble-table1",
            ((FW, "rtc"), "delivered Mpps"),
            ((FW, "cfs + yield when input is empty (coop k=0)"), "delivered Mpps"),
            digits=1,
            factor=True,
        ),
        "bubble-table1.rtc-vs-k1": share(
            "bubble-table1",
            ((FW, "rtc"), "delivered Mpps"),
            ((FW, "cfs + yield after every batch (coop k=1)"), "delivered Mpps"),
            digits=1,
            factor=True,
        ),
        "bubble-chain.fw8-vs-cfs": cell("bubble-chain", ("firewall", "8"), "bubble/cfs"),
        "bubble-chain.fw8-vs-nfvnice": cell("bubble-chain", ("firewall", "8"), "bubble/nfvnice"),
        "bubble-priorities.bubble-p0": cell("bubble-priorities", ("#1 (2/2/2)", "bubble"), "prio 0"),
        "bubble-priorities.nfvnice-p0": cell("bubble-priorities", ("#1 (2/2/2)", "nfvnice"), "prio 0"),
        "bubble-load.idle": cell("bubble-load", "0-1 s", "measured load %"),
        "bubble-load.idle-busy": cell("bubble-load", "0-1 s", "counting busy polls %"),
        "bubble-load.up-2": cell("bubble-load", "3-4 s", "measured load %"),
        "bubble-load.down-2": cell("bubble-load", "8-9 s", "measured load %"),
        "bubble-adaptation.changes-default": cell("bubble-adaptation", "defaults", "batch changes/s"),
        "bubble-adaptation.changes-10": cell("bubble-adaptation", "period_ms = 10", "batch changes/s"),
        "bubble-adaptation.steady-default": cell(
            "bubble-adaptation", "defaults", "final batches surging/steady", part=lambda text: text.split("/")[1]
        ),
        "bubble-adaptation.steady-10": cell(
            "bubble-adaptation", "period_ms = 10", "final batches surging/steady", part=lambda text: text.split("/")[1]
        ),
        # SCC
        "primitives.getppid": cell("primitives.txt", "system call: getppid", "ns"),
        "primitives.sendto": cell("primitives.txt", "system call: sendto_packet", "ns"),
        "primitives.recvfrom": cell("primitives.txt", "system call: recvfrom_packet", "ns"),
        "primitives.sendmmsg": cell("primitives.txt", "system call: sendmmsg_32_per_frame", "ns"),
        "scc-fig8.p50-mux1": cell("scc-fig8", "mux 1", "p50"),
        "scc-fig8.p50-mux256": cell("scc-fig8", "mux 256", "p50"),
        "scc-fig8.iqr-mux1": cell("scc-fig8", "mux 1", "IQR"),
        "scc-fig8.iqr-mux256": cell("scc-fig8", "mux 256", "IQR"),
        "scc-fig10.scc-7": cell("scc-fig10", "scc", "7 NF p50 (IQR)", part=first_number),
        "scc-fig10.cfs-7": cell("scc-fig10", "cfs", "7 NF p50 (IQR)", part=first_number),
        "scc-fig9.scc19-6": cell("scc-fig9", "scc batch nice -19", "6 NF p50 (IQR)", part=first_number),
        "scc-fig9.cfs-6": cell("scc-fig9", "cfs", "6 NF p50 (IQR)", part=first_number),
        "profiler-kernel-table4.kernel": span("profiler-kernel-table4", "kernel % of CPU"),
        "profiler-kernel-table4.syscalls-mux1": span(
            "profiler-kernel-table4", "syscalls/pkt", lambda row: row["mux"] == "1", digits=1
        ),
        "profiler-kernel-table4.syscalls-mux32": span(
            "profiler-kernel-table4", "syscalls/pkt", lambda row: row["mux"] == "32", digits=1
        ),
        "profiler-kernel-table4.unexplained": span("profiler-kernel-table4", "unexplained (Table 3)", suffix=" %"),
        # μNF
        "port-costs.branch": cell(
            "port-costs",
            "branch (2 ways), 2 markers and a join",
            "vs ring",
            part=lambda text: f"about {number(text):.0f}",
        ),
        "micronf-table1.overall": cell("micronf-table1", "overall", "saved"),
        "micronf-table1.validator": cell("micronf-table1", "validate_url", "weight when chained"),
        "micronf-fig10.coop-rtc-3": share("micronf-fig10", ("3", "coop"), ("3", "rtc")),
        "micronf-fig10.bubble-rtc-4-7": shares_span("micronf-fig10", "bubble", "rtc", ["4", "5", "6", "7"]),
        "micronf-fig10.bubble-rtc-8": share("micronf-fig10", ("8", "bubble"), ("8", "rtc")),
        "micronf-fig10-cores.line-14": cell("micronf-fig10-cores", "mc-14.88-1", "delivered Mpps", index=1),
        "micronf-fig11.composed": note("micronf-fig11", r"delivered Mpps: composed ([\d.]+)"),
        "micronf-fig11.scaled": note("micronf-fig11", r"with sfc.scale ([\d.]+)"),
        "micronf-fig11.held-dropped": note("micronf-fig11", r"held packets dropped: ([\d,]+)"),
        "micronf-fig11-coop.composed": note("micronf-fig11-coop", r"delivered Mpps: composed ([\d.]+)"),
        "micronf-fig11-coop.scaled": note("micronf-fig11-coop", r"with sfc.scale ([\d.]+)"),
        # the profiler
        "profiler.not-running-slow": span(
            THREE_FIREWALLS, "NF not running", lambda row: row["scheduler"] in ("coop", "unis", "nfvnice"), digits=0
        ),
        "profiler.not-running-fast": span(
            THREE_FIREWALLS, "NF not running", lambda row: row["scheduler"] in ("rtc", "bubble"), digits=0
        ),
        # what a profiled run loses: 1 - the median of the ratios of runs made back to back
        **{
            f"profiler-cost.{kind}-{scheduler}": cell(
                "profiler-cost",
                scheduler,
                f"{kind}/without (median)",
                part=lambda text: f"{(1 - float(text)) * 100:.1f} %",
            )
            for kind in ("tracing", "full")
            for scheduler in ("rtc", "coop", "unis")
        },
    }
)


# --- the docs ----------------------------------------------------------------------------------------------------


def pages(root: Path = REPO) -> list[Path]:
    """README.md and every page under docs/."""
    return [root / "README.md"] + sorted((root / "docs").rglob("*.md"))


def render(kind: str, name: str, page: str, root: Path) -> str:
    """What goes between a marker and its end."""
    if kind == "value":
        return VALUES[name](root)
    made = TABLES[name](root)
    below = ["", source_line(made.sources, page, root)] if made.cite else []
    return "\n\n" + "\n".join(made.lines + below) + "\n\n"


def known(kind: str, name: str) -> bool:
    return name in (TABLES if kind == "table" else VALUES)


def first_difference(ours: str, theirs: str) -> str:
    a, b = ours.splitlines(), theirs.splitlines()
    for line_a, line_b in zip(a, b, strict=False):
        if line_a != line_b:
            return f"the page has {line_a!r}, bench/results gives {line_b!r}"
    if len(a) > len(b):
        return f"the page has {a[len(b)]!r} more"
    return f"bench/results gives {b[len(a)]!r} more"


def process(page: Path, root: Path) -> tuple[str, list[str]]:
    """The page with every marker rendered again, and what is wrong with it: unknown names, unclosed markers,
    tables that cannot be rendered, and (what --check reports) each table or value that differs."""
    text, problems = page.read_text(), []
    where = page.relative_to(root).as_posix()
    closed = {m.start() for m in MARKER.finditer(text)}
    for opening in OPENING.finditer(text):
        if opening.start() not in closed:
            problems.append(f"{where}: {opening.group(1)} {opening.group(2)} has no <!-- /{opening.group(1)} -->")

    def replace(match: re.Match) -> str:
        kind, name, body = match.groups()
        if not known(kind, name):
            problems.append(f"{where}: {kind} {name} is not one bench/docs_tables.py knows")
            return match.group(0)
        try:
            fresh = render(kind, name, where, root)
        except (OSError, KeyError, ValueError, IndexError) as error:
            problems.append(f"{where}: {kind} {name} cannot be made from bench/results: {error}")
            return match.group(0)
        if fresh != body:
            problems.append(f"{where}: {kind} {name} differs: {first_difference(body, fresh)}")
        return f"<!-- {kind}: {name} -->{fresh}<!-- /{kind} -->"

    return MARKER.sub(replace, text), problems


README_LINES = 300
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found, seen = set(), {}
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", page.read_text()), re.M):
        base = slug(heading)
        found.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    return found


def broken_links(page: Path, root: Path) -> list[str]:
    """Each relative link of the page (to bench/results, another page, a heading) that leads nowhere."""
    where, problems = page.relative_to(root).as_posix(), []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            problems.append(f"{where}: link {target} leads to no file")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            problems.append(f"{where}: link {target} names no heading of {goal.name}")
    return problems


def check(root: Path = REPO) -> list[str]:
    """Every problem in the docs under `root`, changing nothing: tables and values that differ from bench/results
    or name nothing known, links that lead nowhere, and a README longer than README_LINES."""
    parsed.cache_clear()
    problems = []
    for page in pages(root):
        if page.exists():
            problems += process(page, root)[1] + broken_links(page, root)
    lines = len((root / "README.md").read_text().splitlines())
    if lines > README_LINES:
        problems.append(f"README.md: {lines} lines, more than {README_LINES}: move the detail to docs/")
    return problems


def update(root: Path = REPO) -> tuple[list[str], list[str]]:
    """Writes every page whose tables or values moved; returns the pages written and what could not be made."""
    parsed.cache_clear()
    written, problems = [], []
    for page in pages(root):
        if not page.exists():
            continue
        text, found = process(page, root)
        problems += [p for p in found if " differs: " not in p]
        if text != page.read_text():
            page.write_text(text)
            written.append(page.relative_to(root).as_posix())
    return written, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--check",
        action="store_true",
        help="change nothing; exit 1 naming each table that differs "
        "(and each broken link, and a README over 300 lines)",
    )
    group.add_argument("--list", action="store_true", help="each table and value, with the files it is made from")
    args = parser.parse_args(argv)
    if args.list:
        for kind, made in (("table", TABLES), ("value", VALUES)):
            for name, make in made.items():
                parsed.cache_clear()
                READ.clear()
                make(REPO)
                print(f"{kind} {name}: {', '.join(f'{RESULTS}/{n}' for n in sorted(READ))}")
        return 0
    if args.check:
        problems = check()
        print("\n".join(problems) if problems else "docs: every table and value is what bench/results gives")
        return 1 if problems else 0
    written, problems = update()
    for page in written:
        print(f"wrote {page}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
