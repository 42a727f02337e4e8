"""Helpers the experiment scripts under bench/ share: run a comparison, read its medians, save tables."""

from __future__ import annotations

import gzip
import json
import statistics
import sys
from pathlib import Path

import tandem
from controlplane.errors import EXIT_INTERRUPTED
from controlplane.experiment.compare import summarise
from controlplane.results.machine_modes import cheapest_entry_cost, slow_runs
from tandem import Spec

RESULTS = Path(__file__).resolve().parent / "results"


def run(spec: Spec, schedulers: list[str], repeat: int, duration: float) -> dict:
    """A comparison through the Python API, as the JSON `compare --json` writes (what the helpers here read)."""
    print(f"{spec.name}: {', '.join(schedulers)}", file=sys.stderr, flush=True)
    comparison = tandem.compare(spec, schedulers, repeat, duration, ceiling=False, source=f"bench {spec.name}")
    stop_if_interrupted(comparison)  # its rounds end at Ctrl-C or a termination signal: so does the benchmark
    return comparison.as_json()


def stop_if_interrupted(outcome) -> None:
    """Ctrl-C or a termination signal ends one run cleanly (runner.py); the benchmark ends with it, saving nothing,
    rather than going on to its next run."""
    if outcome.exit_status == EXIT_INTERRUPTED:
        raise SystemExit("interrupted: nothing saved")


def mpps(comparison: dict, scheduler: str) -> float | None:
    return ((comparison["schedulers"][scheduler]["median"]) or {}).get("delivered_mpps")


def paired_share(
    comparison: dict, scheduler: str, reference: str, slow: bool | None = None, fastest: float | None = None
) -> float | None:
    """Median over repeats of scheduler / reference delivered Mpps, each pair run back to back (compare
    interleaves the schedulers), so a slow spell of this VM hits both sides of a ratio alike. A pair with one run
    in the VM's fast mode and one in its slow mode compares the host, not the schedulers, and is left out unless
    no other pair is left. slow=True or False keeps only the pairs that both ran in that mode (None if none).
    `fastest`: the cheapest first-NF cost seen for these NFs anywhere (see slow_runs)."""
    ours, theirs = comparison["schedulers"][scheduler]["runs"], comparison["schedulers"][reference]["runs"]
    flags = slow_runs(ours + theirs, fastest)
    pairs = [
        (a, b, flags[i], flags[len(ours) + i])
        for i, (a, b) in enumerate(zip(ours, theirs, strict=False))
        if a["delivered_mpps"] is not None and b["delivered_mpps"]
    ]
    same_mode = [p for p in pairs if p[2] == p[3]]
    if slow is not None:
        pairs = same_mode = [p for p in same_mode if p[2] is slow]
    shares = [a["delivered_mpps"] / b["delivered_mpps"] for a, b, _, _ in (same_mode or pairs)]
    return statistics.median(shares) if shares else None


def interleaved_variants(variants: dict[str, tuple[Spec, str]], repeat: int, duration: float) -> dict:
    """Runs each variant (a spec and the scheduler to run it under) once per repeat, variant after variant, so
    that one scheduler can be compared with itself under different options as compare() compares schedulers.
    Returns a comparison-shaped document: {"schedulers": {variant: {"runs": [...], "results": [...], "median"}}}."""
    merged = {name: {"runs": [], "results": [], "median": None} for name in variants}
    for _ in range(repeat):
        for name, (spec, scheduler) in variants.items():
            one = run(spec, [scheduler], 1, duration)["schedulers"][scheduler]
            merged[name]["runs"] += one["runs"]
            merged[name]["results"] += one["results"]
    comparison = {"schedulers": merged}
    summarise(comparison)
    return comparison


def chain_mpps(comparison: dict, scheduler: str, chain: str) -> float | None:
    values = [
        c["window"]["delivered_mpps"]
        for r in comparison["schedulers"][scheduler]["results"]
        for c in r["chains"]
        if c["name"] == chain
    ]
    return statistics.median(values) if values else None


def exact(comparison: dict) -> str:
    runs = [r["accounting_exact"] for e in comparison["schedulers"].values() for r in e["runs"]]
    return f"{sum(runs)}/{len(runs)} runs exact"


def fmt(value, digits=3) -> str:
    return "failed" if value is None else f"{value:.{digits}f}"


def share_text(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


def ratio(a, b) -> str:
    return share_text(None if a is None or not b else a / b)


def fastest_entry_cost(comparisons: list[dict]) -> float | None:
    """The cheapest first-NF cost over every run of these comparisons (the same first NF in all of them)."""
    return cheapest_entry_cost([r for c in comparisons for e in c["schedulers"].values() for r in e["runs"]])


def save_result(name: str, document: dict, text: str) -> None:
    """Writes bench/results/NAME.json.gz (every run) and NAME.md (the table), prints the table, and renders the
    docs' tables again from bench/results (bench/docs_tables.py), so a result measured again reaches the docs."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json.gz").write_bytes(gzip.compress(json.dumps(document, indent=1).encode(), 9, mtime=0))
    (RESULTS / f"{name}.md").write_text(f"```\n{text}\n```\n")
    print(text, flush=True)
    refresh_docs()


def measured_or_saved(name: str, saved: bool, measure, report) -> dict:
    """The result saved as bench/results/NAME (`saved`: a figure drawn again), or `measure()` saved with `report`."""
    if saved:
        return read_result(name)
    document = measure()
    save_result(name, document, report(document))
    return document


def save_figure(figure, name: str) -> None:
    """A matplotlib figure written as bench/results/NAME.png, laid out tight, and closed."""
    import matplotlib.pyplot as plt  # the caller chose the backend (Agg) before its own import

    figure.tight_layout()
    figure.savefig(RESULTS / f"{name}.png", dpi=110)
    plt.close(figure)


def read_result(name: str) -> dict:
    """Every run of a saved result: bench/results/NAME.json.gz (or NAME.json, as results were kept before)."""
    path = RESULTS / f"{name}.json.gz"
    if path.exists():
        return json.loads(gzip.decompress(path.read_bytes()))
    return json.loads((RESULTS / f"{name}.json").read_text())


def run_selected(steps: dict, only: str | None) -> int:
    """Runs the experiment `only` names, or every one in order; 0 for main() to return."""
    for name, step in steps.items():
        if only in (None, name):
            step()
    return 0


def refresh_docs() -> None:
    """The docs' results tables made again from bench/results; a table that cannot be made is said, not fatal
    (the result is saved either way)."""
    from bench import docs_tables

    try:
        written, problems = docs_tables.update()
    except Exception as error:  # noqa: BLE001 - a measurement is never lost to the docs
        written, problems = [], [f"docs not updated: {error!r}"]
    for page in written:
        print(f"docs: wrote {page}", file=sys.stderr, flush=True)
    for problem in problems:
        print(f"docs: {problem}", file=sys.stderr, flush=True)
