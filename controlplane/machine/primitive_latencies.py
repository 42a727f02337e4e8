"""This machine's primitive latencies (SCC Table 2 and Fig. 3): a context switch per scheduling policy, system calls
(a null one and a kernel-I/O NF's packet-socket calls), a cache line moved between cores, a sleeping thread's
wake-up on a core idle 1, 10 or 100 ms (what a sleeping worker adds to the first packet after an idle spell), the
switches auto's model charges its policies for, and memory latency by working-set size and stride, measured by
build/tandem-primitives (Debian 12 has no lmbench) with the machine held like a run, cached per machine with their
spread, and shown as tables and a plot."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from controlplane.errors import RunFailed
from controlplane.machine import changes
from controlplane.machine.description import machine_description
from controlplane.terminal.tables import table

TOOL = Path(__file__).resolve().parents[2] / "build" / "tandem-primitives"
CACHE_PATH = Path(os.environ.get("TANDEM_CACHE_DIR", Path.home() / ".cache" / "tandem")) / "primitive-latencies.json"
CACHE_FORMAT = 3  # 2: the idle wake-ups; 3: auto's switches
TIMEOUT_SECONDS = 600  # the full memory sweep takes about a minute here
# The switches auto's model charges its policies for (controlplane/machine/switch_costs.py), as the table names them.
AUTO_SWITCHES = {
    "yield_handoff": "sched_yield hand-off on one core (coop)",
    "priority_switch": "SCHED_FIFO priority switch, until the other runs (unis)",
    "user_level_switch": "user-level thread switch (bubble)",
}


def cached() -> dict | None:
    """The measurement cached for this machine, or None (never measures: `./tandem primitives` does)."""
    try:
        document = json.loads(CACHE_PATH.read_text())
    except (OSError, ValueError):
        return None
    if document.get("format") != CACHE_FORMAT or document.get("machine") != machine_description():
        return None
    return document


def run_tool(core: int | None = None, other_core: int | None = None, *flags: str) -> dict:
    """Runs tandem-primitives with the machine held (no run beside it) and returns what it printed."""
    command = [str(TOOL)]
    for flag, value in (("--core", core), ("--other-core", other_core)):
        if value is not None:
            command += [flag, str(value)]
    command += flags
    with changes.MachineSession():
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
        except FileNotFoundError:
            raise RunFailed(f"{TOOL} is not built (./scripts/setup.sh builds it)") from None
        except subprocess.TimeoutExpired:
            raise RunFailed(f"tandem-primitives did not finish within {TIMEOUT_SECONDS} s") from None
    if result.returncode != 0:
        raise RunFailed(f"tandem-primitives failed: {result.stderr.strip()}")
    return json.loads(result.stdout)


def measure(core: int | None = None, other_core: int | None = None, quick: bool = False) -> dict:
    """Measures with the machine held (no run beside it), caches and returns the document."""
    results = run_tool(core, other_core, *(["--quick"] if quick else []))
    document = {
        "format": CACHE_FORMAT,
        "machine": machine_description(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "results": results,
    }
    try:
        CACHE_PATH.parent.mkdir(parents=True, exist_ok=True)
        CACHE_PATH.write_text(json.dumps(document, indent=1))
    except OSError as error:
        print(f"tandem: note: cannot write {CACHE_PATH}: {error.strerror}")
    return document


def _cell(measurement: dict) -> list[str]:
    if "unsupported" in measurement:
        return ["unsupported", measurement["unsupported"]]
    return [f"{measurement['median_ns']:.1f}", f"{measurement['min_ns']:.1f}...{measurement['max_ns']:.1f}"]


def report(document: dict) -> str:
    """Table 2 (context switches, system calls, the cache line) and Fig. 3's numbers, in nanoseconds."""
    results = document["results"]
    rows = [[f"context switch, {policy}", *_cell(m)] for policy, m in results["context_switch"].items()]
    rows += [[f"system call: {name}", *_cell(m)] for name, m in results["syscall"].items()]
    rows.append(
        [f"cache line, core {results['core']} <-> core {results['other_core']}", *_cell(results["cache_line_transfer"])]
    )
    rows += [
        [f"futex wake-up, core {results['core']} idle {idle}", *_cell(m)] for idle, m in results["idle_wake"].items()
    ]
    rows += [[label, *_cell(results[key])] for key, label in AUTO_SWITCHES.items() if key in results]
    lines = [
        f"primitive latencies on {document['machine']} ({document['date']}; median and range of "
        f"{results['repetitions']} repetitions; switches on core {results['core']})",
        "",
        table(["primitive", "ns", "range"], rows),
        "",
        "memory latency (ns per dependent load, random order), by working set and stride:",
        "",
    ]
    strides = sorted({entry["stride"] for entry in results["memory"]})
    sizes = sorted({entry["bytes"] for entry in results["memory"]})
    by_cell = {(entry["bytes"], entry["stride"]): entry for entry in results["memory"]}
    memory_rows = [
        [_size(size), *[_cell(by_cell[size, stride])[0] if (size, stride) in by_cell else "" for stride in strides]]
        for size in sizes
    ]
    lines.append(table(["working set", *[f"stride {s} B" for s in strides]], memory_rows))
    return "\n".join(lines)


def _size(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def memory_latency_ns(document: dict, working_set: int, stride: int = 64) -> float | None:
    """The measured latency at the largest working set not above `working_set` (bytes), for one stride."""
    entries = [
        e
        for e in document["results"]["memory"]
        if e["stride"] == stride and e["bytes"] <= working_set and "median_ns" in e
    ]
    return max(entries, key=lambda e: e["bytes"])["median_ns"] if entries else None


def plot(document: dict, path: str) -> None:
    """Fig. 3: memory latency against working-set size, one line per stride."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for stride in sorted({e["stride"] for e in document["results"]["memory"]}):
        points = [
            (e["bytes"], e["median_ns"])
            for e in document["results"]["memory"]
            if e["stride"] == stride and "median_ns" in e
        ]
        axes.plot([b / 1024 for b, _ in points], [ns for _, ns in points], marker="o", label=f"stride {stride} B")
    axes.set_xscale("log", base=2)
    axes.set_xlabel("working set (KiB)")
    axes.set_ylabel("ns per dependent load")
    axes.set_title(f"Memory latency by working set (random pointer chase)\n{document['machine']}", fontsize=9)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
