"""A service's hugepage memory over many live changes: a service (`./tandem serve`) of two firewalls of 1,000 rules and
a counter of 262,144 flows on one NF core under steady generator traffic, beside a light chain, takes cycle after cycle
of changes: switched to rtc (one process for the chain) and back to coop (a process per NF), its first firewall's
rules changed, its light chain removed and another added. Each change starts processes or builds tables in hugepage
memory beside the old ones; the manager frees what the gone processes and the replaced instances built
(dataplane/run/nf_object_reclaim.h). After each change, the machine's free hugepage memory, once the frees settled:
it must stay flat from cycle to cycle (before the frees, every switch left several hugepages behind, until an NF
could not be built). Also per change: its answer and the packets full rings dropped meanwhile.

Usage (as root, nothing else running): .venv/bin/python bench/service_soak.py [--cycles 12] [--rate "500 kpps"]
Writes bench/results/service-soak.json.gz, .md and .png.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bench.experiment_support import measured_or_saved, save_figure  # noqa: E402
from bench.live_changes import SETTLE_S, serve_with_changes  # noqa: E402
from controlplane.machine.changes import free_hugepage_bytes  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

SPEC = """\
name: service-soak
traffic: {{rate: {rate}, size: 64, flows: 64}}
scheduler: coop
chains:
  - name: main
    nfs:
      - {{name: fw1, type: firewall, core: 1, args: {{synthetic_rules: 1000}}}}
      - {{name: count, type: counter, core: 1, args: {{max_flows: 262144}}}}
      - {{name: fw2, type: firewall, core: 1, args: {{synthetic_rules: 1000}}}}
  - name: side0
    traffic: {{rate: 5 kpps, size: 64, flows: 16}}
    nfs:
      - {{name: side0, type: checkip, core: 1}}
"""
KINDS = ["switch to rtc", "new rules", "switch to coop", "remove a chain", "add a chain"]
MIB = 2**20


def cycle_changes(cycle: int) -> list:
    """The changes of one cycle, in KINDS' order: each a call of the service's Control that sends it."""
    added = {
        "name": f"side{cycle + 1}",
        "traffic": {"rate": "5 kpps", "size": 64, "flows": 16},
        "nfs": [{"name": f"side{cycle + 1}", "type": "checkip", "core": 1}],
    }
    return [
        lambda control: control.set_scheduler("rtc"),
        lambda control: control.set_args("fw1", {"synthetic_rules": 1000 + cycle + 1}),
        lambda control: control.set_scheduler("coop"),
        lambda control: control.remove_chain(f"side{cycle}"),
        lambda control: control.add_chain(added),
    ]


def read_after_change(readings: list[int], of: int) -> None:
    readings.append(free_hugepage_bytes())
    print(f"  change {len(readings)} of {of}: {readings[-1] / MIB:,.0f} MiB free", file=sys.stderr, flush=True)


def measure(cycles: int, rate: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="tandem-soak-") as work:
        spec = Path(work) / "soak.yaml"
        spec.write_text(SPEC.format(rate=rate))
        command = [str(HERE.parent / "tandem"), "serve", str(spec), "--ready-for", "rtc"]
        baseline, readings = [], []

        def first(control):  # the start's level, read just before the first change
            baseline.append(free_hugepage_bytes())
            return cycle_changes(0)[0](control)

        changes = [change for cycle in range(cycles) for change in cycle_changes(cycle)]
        changes[0] = first
        results, _, _ = serve_with_changes(
            command,
            Path(work) / "control.sock",
            Path(work) / "results.json",
            changes,
            after_each=lambda: read_after_change(readings, len(changes)),
        )
    return {
        "machine": machine_description(),
        "rate": rate,
        "cycles": cycles,
        "baseline_free_bytes": baseline[0],
        "free_bytes_after": readings,
        "changes": [
            {"op": change.get("op"), "state": change.get("state"), "ring_drops": change.get("ring_drops_during")}
            for change in results["changes"]
        ],
        "exact": results["accounting"]["exact"],
        "reclaim": results.get("nf_object_reclaim"),
    }


def per_cycle(document: dict) -> list[float]:
    """The free hugepage memory (MiB) after each cycle's last change."""
    per = len(KINDS)
    readings = document["free_bytes_after"]
    return [readings[i] / MIB for i in range(per - 1, len(readings), per)]


def slope_mib_per_cycle(values: list[float]) -> float | None:
    """The least-squares slope of `values` over their index (the first cycle left out: the heap grows to hold one
    layout beside another once)."""
    points = values[1:]
    if len(points) < 2:
        return None
    mean_x, mean_y = (len(points) - 1) / 2, sum(points) / len(points)
    num = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(points))
    den = sum((x - mean_x) ** 2 for x in range(len(points)))
    return num / den


def report(document: dict) -> str:
    cycles = per_cycle(document)
    slope = slope_mib_per_cycle(cycles)
    reclaim = document.get("reclaim") or {}
    states = [change["state"] for change in document["changes"]]
    # The answers come in the order made, KINDS' order in each cycle.
    drops_by_kind = {kind: 0 for kind in KINDS}
    for i, change in enumerate(document["changes"]):
        drops_by_kind[KINDS[i % len(KINDS)]] += change["ring_drops"] or 0
    baseline = document["baseline_free_bytes"]
    lines = [
        f"A service under {document['rate']} of 64-byte packets (two firewalls of 1,000 ACL rules, a counter of "
        f"262,144 flows, on one NF core, beside a light chain at 5 kpps), {document['cycles']} cycles of "
        f"{len(KINDS)} live changes ({', '.join(KINDS)}); on {document['machine']}",
        f"free: the machine's free hugepage memory {SETTLE_S} s after each cycle's last change was answered (the "
        "manager's frees settled); start: before the first change.",
        "",
        table(
            ["cycle", "free MiB", "against the first cycle MiB"],
            [["start", f"{baseline / MIB:,.0f}", "n/a"]]
            + [[str(i + 1), f"{value:,.0f}", f"{value - cycles[0]:+,.0f}"] for i, value in enumerate(cycles)],
        ),
        "",
        "free memory's slope from the second cycle on: "
        + ("n/a" if slope is None else f"{slope:+.2f} MiB a cycle")
        + f"; objects freed by the manager: {reclaim.get('objects_freed', 'n/a')} in {reclaim.get('passes', 'n/a')} "
        f"passes, the longest {reclaim.get('longest_ms', 0):.1f} ms (on its own thread)",
        f"changes applied: {states.count('applied')} of {len(states)}; exact accounting: "
        f"{'yes' if document['exact'] else 'NO'}",
        "packets full rings dropped from each change's request to its answer, all cycles: "
        + ", ".join(f"{kind} {drops}" for kind, drops in drops_by_kind.items())
        + " (a ring overflows now and then on this VM whichever change is under way; bench/live_changes.py sets each "
        "change against the same measure before it)",
    ]
    return "\n".join(lines)


def plot(document: dict) -> None:
    """The free hugepage memory after every change, the start's level as a line."""
    readings = [value / MIB for value in document["free_bytes_after"]]
    figure, axis = plt.subplots(figsize=(10, 4))
    colours = ["#9DB4D6", "#7FB77E", "#C8A2C8", "#D9A25F", "#E6B0AA"]
    for k, kind in enumerate(KINDS):
        points = [(i + 1, value) for i, value in enumerate(readings) if i % len(KINDS) == k]
        axis.scatter(*zip(*points, strict=True), label=kind, color=colours[k], s=18)
    axis.plot(range(1, len(readings) + 1), readings, color="grey", linewidth=0.8, zorder=0)
    axis.axhline(document["baseline_free_bytes"] / MIB, color="black", linestyle="--", label="before the changes")
    axis.set_ylim(bottom=0)
    axis.set_xlabel("live change")
    axis.set_ylabel("free hugepage memory (MiB)")
    axis.set_title(f"A service's hugepage memory over {len(readings)} live changes, {document['rate']}")
    axis.legend(fontsize=8, loc="lower left")
    save_figure(figure, "service-soak")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=12)
    parser.add_argument("--rate", default="500 kpps")
    parser.add_argument("--replot", action="store_true", help="draw the figure again from the saved result")
    args = parser.parse_args()
    document = measured_or_saved("service-soak", args.replot, lambda: measure(args.cycles, args.rate), report)
    plot(document)
    print(report(document))


if __name__ == "__main__":
    main()
