"""Scheduler switches across layouts, live, against a restart: a service (`./tandem serve`) of three firewalls on one
NF core under steady generator traffic, switched coop -> rtc -> bubble -> coop -> unis -> rtc -> coop while the
traffic runs. Each switch between layouts re-lays the NFs out (the entries held, the NFs drained, their processes
replaced: dataplane/run/run_relayout.cc); coop -> unis stays in one layout and swaps the modules in place, the row to
read the others against. Per switch: how long the new processes took to start beside the old ones (the traffic
flowing), how long the entries were then held (drain, old processes gone, new ones going on),
and the sink's measure of what it cost (dataplane/run/change_watch.h: delivery short of the rate before, packets
full rings dropped, the highest latency, in the window from the request to 300 ms after). Set against them, what a
user does without it: stop the service and start it again under the other scheduler.

Usage (as root, nothing else running): .venv/bin/python bench/live_relayout.py [--repeat 3] [--rate "1 Mpps"]
Writes bench/results/live-relayout.json.gz, .md and .png.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bench.experiment_support import measured_or_saved, save_figure  # noqa: E402
from bench.live_changes import SPEC as LIVE_CHANGES_SPEC  # noqa: E402
from bench.live_changes import median, rounds_of, serve_with_changes  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

START = "coop"
SWITCHES = ["rtc", "bubble", "coop", "unis", "rtc", "coop"]
# The live-changes benchmark's three firewalls alone: without the light chain, and without the middle one's second
# instance (the switches of three NFs, as this table has always measured them; a scaled NF's re-layout is tested in
# tests/integration/test_service.py).
SPEC = (
    LIVE_CHANGES_SPEC.split("  - name: side")[0]
    .replace(", scale: {{max_instances: 2, cores: [1]}}", "")
    .replace("name: live-changes", "name: live-relayout")
)


def one_round(spec: Path, start: str, work: Path, previous_stop: float | None) -> dict:
    """A service started under `start`, switched through SWITCHES; its start timed from `previous_stop`."""
    command = [str(HERE.parent / "tandem"), "serve", str(spec), "--scheduler", start, "--ready-for", "unis"]
    changes = [lambda control, name=name: control.set_scheduler(name) for name in SWITCHES]
    results, delivering, stopped_at = serve_with_changes(command, work / "control.sock", work / "results.json", changes)
    return {
        "changes": results["changes"],
        "exact": results["accounting"]["exact"],
        "generated": results["chains"][0]["generated"],
        "delivered": results["chains"][0]["delivered"],
        "restart_s": None if previous_stop is None else delivering - previous_stop,
        "stopped_at": stopped_at,
    }


def measure(repeat: int, rate: str) -> dict:
    rounds = rounds_of(SPEC.format(rate=rate), repeat, [START], one_round)
    return {"machine": machine_description(), "rate": rate, "repeat": repeat, "rounds": rounds}


def rows(document: dict) -> list[dict]:
    """Per switch (from -> to, in the order made), the medians over the rounds; then the restart."""
    by_switch: dict[str, list[dict]] = {}
    for run in document["rounds"]:
        before = START
        for change in run["changes"]:
            if change["op"] != "set_scheduler" or change["state"] != "applied":
                continue
            by_switch.setdefault(f"{before} -> {change['scheduler']}", []).append(change)
            before = change["scheduler"]
    out = []
    for switch, changes in by_switch.items():
        costs = [change.get("cost") or {} for change in changes]
        relayout = all(change.get("relayout") for change in changes)
        out.append(
            {
                "switch": switch,
                "n": len(changes),
                "relayout": relayout,
                "staged_ms": median([change.get("staged_ms") for change in changes]) if relayout else None,
                "held_ms": median([change.get("held_ms") for change in changes]) if relayout else None,
                "drain_ms": median([change.get("drain_ms") for change in changes]) if relayout else None,
                "start_ms": median([change.get("start_ms") for change in changes]) if relayout else None,
                "switch_us": None if relayout else median([change.get("switch_us") for change in changes]),
                "ring_drops": median([cost.get("ring_drops_in_window") for cost in costs]),
                "deficit_ms": median([cost.get("deficit_ms") for cost in costs]),
                "deficit_noise_ms": median([cost.get("deficit_noise_ms") for cost in costs]),
                "latency_max_us": median([cost.get("latency_max_during_us") for cost in costs]),
                "latency_before_us": median([cost.get("latency_max_before_us") for cost in costs]),
            }
        )
    restarts = [run["restart_s"] for run in document["rounds"] if run["restart_s"] is not None]
    if restarts:
        out.append(
            {
                "switch": "stop and start again",
                "n": len(restarts),
                "relayout": False,
                "held_ms": median(restarts) * 1e3,  # nothing delivered from the stop to the first packet
                "deficit_ms": median(restarts) * 1e3,
            }
        )
    return out


def report(document: dict) -> str:
    def fmt(value, digits=1):
        return "n/a" if value is None else f"{value:,.{digits}f}"

    in_windows = sum(
        (change.get("cost") or {}).get("ring_drops_in_window") or 0
        for run in document["rounds"]
        for change in run["changes"]
    )
    dropped = sum(run["generated"] - run["delivered"] for run in document["rounds"])
    generated = sum(run["generated"] for run in document["rounds"])
    lines = [
        f"Scheduler switches under {document['rate']} of 64-byte packets through three firewalls (200 ACL rules "
        f"each) on one NF core, a service started under {START} and switched live, {document['repeat']} rounds, "
        f"medians; on {document['machine']}",
        "staged: the new processes started one by one beside the old ones, the traffic flowing; then held: the "
        "entries held, until the new module attached (drain: until the NFs held nothing; start: the staged processes "
        "going on in the old ones' places); switch: a module swapped in place within a layout. "
        "window: from the request to 300 ms after the change. short: delivery below the rate before, in ms of that "
        "rate (noise: the same measure over the 200 ms before, scaled to the window); a restart delivers nothing "
        "from its stop to its first packet.",
        "",
        table(
            ["switch", "n", "staged ms", "held ms", "drain ms", "start ms", "in place us", "ring drops", "short ms"]
            + ["(noise)"]
            + ["latency max us", "(before)"],
            [
                [
                    row["switch"],
                    row["n"],
                    fmt(row.get("staged_ms")),
                    fmt(row["held_ms"]),
                    fmt(row.get("drain_ms"), 2),
                    fmt(row.get("start_ms")),
                    fmt(row.get("switch_us")),
                    fmt(row.get("ring_drops"), 0),
                    fmt(row["deficit_ms"]),
                    fmt(row.get("deficit_noise_ms")),
                    fmt(row.get("latency_max_us"), 0),
                    fmt(row.get("latency_before_us"), 0),
                ]
                for row in rows(document)
            ],
        ),
        "",
        "exact accounting in every run: " + ("yes" if all(r["exact"] for r in document["rounds"]) else "NO"),
        f"packets full rings dropped in the switches' windows, all rounds: {in_windows:,}; dropped in the "
        f"services' runs in all: {dropped:,} of {generated:,} (the rest outside the windows: the starts, a "
        "module's own drops between switches)",
    ]
    refused = [c for r in document["rounds"] for c in r["changes"] if c["state"] != "applied"]
    lines.append("switches not made: " + ("none" if not refused else ""))
    for change in refused:
        lines.append(f"- {change['op']}: {(change.get('errors') or [{}])[0].get('message', change['state'])}")
    return "\n".join(lines)


def plot(document: dict) -> None:
    """Per switch, the delivery it fell short by (ms of the rate before), the restart beside them: a log scale,
    since a restart costs seconds and a live switch tens of milliseconds or nothing."""
    table_rows = rows(document)
    names = [row["switch"] for row in table_rows]
    values = [max(row["deficit_ms"] or 0, 0.01) for row in table_rows]
    colours = ["#D9A25F" if row["switch"].startswith("stop") else "#9DB4D6" if row["relayout"] else "#7FB77E"
               for row in table_rows]  # fmt: skip
    figure, axis = plt.subplots(figsize=(10, 4.5))
    axis.bar(range(len(names)), values, color=colours)
    noise = [(i, row.get("deficit_noise_ms")) for i, row in enumerate(table_rows) if row.get("deficit_noise_ms")]
    if noise:  # the same measure with no change: the floor a live switch is read against
        axis.scatter(*zip(*noise, strict=True), marker="_", s=400, color="black", zorder=3)
    axis.scatter([], [], marker="_", s=300, color="black", label="the same, 200 ms before (noise)")
    axis.bar([], [], color="#9DB4D6", label="NFs re-laid out in other processes")
    axis.bar([], [], color="#7FB77E", label="module swapped in place")
    axis.bar([], [], color="#D9A25F", label="stop and start again")
    axis.set_yscale("log")
    axis.set_xticks(range(len(names)), names, rotation=20, ha="right")
    axis.set_ylabel("delivery short of the rate before (ms, log)")
    axis.set_title(f"Live scheduler switches against a restart, {document['rate']} through three firewalls")
    axis.legend(fontsize=8)
    save_figure(figure, "live-relayout")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rate", default="1 Mpps")
    parser.add_argument("--replot", action="store_true", help="draw the figure again from the saved result")
    args = parser.parse_args()
    document = measured_or_saved("live-relayout", args.replot, lambda: measure(args.repeat, args.rate), report)
    plot(document)


if __name__ == "__main__":
    main()
