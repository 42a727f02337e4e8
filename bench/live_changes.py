"""Live changes against a restart: a service (`./tandem serve`) of three firewalls on one NF core under steady
generator traffic, given new firewall arguments, switched to another scheduler and back, its scaled middle firewall
given a second instance and back, a second, light chain removed and another added, a port to another node added (its
VXLAN made by Tandem) and removed while the traffic runs, under each scheduler;
and, set against them, what a user does today: stop the run and start it again. Per change the
sink's measure (dataplane/run/change_watch.h): packets full rings dropped from the request to 300 ms after the change
(against the 200 ms before it), the delivery it fell short of the rate before it (in milliseconds of that rate), and
the highest latency in that window. For the restart: the time from the stop to the first delivered packet of the new
run, and the packets the generator would have offered meanwhile.

Usage (as root, nothing else running): .venv/bin/python bench/live_changes.py [--repeat 3] [--rate "1 Mpps"]
Writes bench/results/live-changes.json.gz, .md and .png.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bench.experiment_support import measured_or_saved, save_figure  # noqa: E402
from controlplane.errors import SetupError  # noqa: E402
from controlplane.launch.control_client import Control  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

# Each scheduler switches to the next and back.
SWITCH_TO = {"coop": "unis", "unis": "coop", "nfvnice": "coop"}
SPEC = """\
name: live-changes
traffic: {{rate: {rate}, size: 64, flows: 64}}
chains:
  - name: fw3
    nfs:
      - {{name: fw1, type: firewall, core: 1, args: {{synthetic_rules: 200}}}}
      - {{name: fw2, type: firewall, core: 1, args: {{synthetic_rules: 200}}, scale: {{max_instances: 2, cores: [1]}}}}
      - {{name: fw3, type: firewall, core: 1, args: {{synthetic_rules: 200}}}}
  - name: side
    traffic: {{rate: 5 kpps, size: 64, flows: 16}}
    nfs:
      - {{name: side, type: checkip, core: 1}}
"""
# New rules that pass what the old ones passed (the generator never sends to 172.16.0.0/12): the change's cost is the
# swap's alone, not a change of what the firewall lets through.
NEW_ARGS = {"synthetic_rules": 400}
# The light chain's twin, added once it is gone (a removed chain's name stays taken). Under unis its NF's cost is the
# removed one's, measured at the start: same type and arguments.
ADDED_CHAIN = {
    "name": "side2",
    "traffic": {"rate": "5 kpps", "size": 64, "flows": 16},
    "nfs": [{"name": "side2", "type": "checkip", "core": 1}],
}
# A wire port to another node (198.18.0.2: the benchmarking range, never the machine's own network; nothing answers),
# as a node agent adds one when a chain goes on to the next node: its VXLAN made, then its packet socket opened.
WIRE_PORT = {"name": "wire", "vxlan": {"vni": 4242, "remote": "198.18.0.2"}}
SETTLE_S = 1.5  # between changes: the 300 ms window of one and the 200 ms baseline of the next, with room


def first_delivery(control: Control, process: subprocess.Popen, timeout_s: float = 120) -> float:
    """Waits until the service delivers; returns when (time.monotonic())."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the service ended: {process.stderr.read()}")
        try:
            status = control.status()
            if status.chains and status.chains[0].delivered > 0:
                return time.monotonic()
        except SetupError:
            pass
        time.sleep(0.02)
    raise RuntimeError("the service did not deliver within its start-up time")


def serve_with_changes(
    command: list[str], socket: Path, out: Path, changes: list, after_each=None
) -> tuple[dict, float, float]:
    """`./tandem serve` as `command` says; once it delivers (and 2 s past its start's own disturbances) each of
    `changes` (a call of the service's Control that sends one) made and answered, SETTLE_S apart, `after_each()`
    called at the end of each; then stopped. Its results, when it first delivered and when it was told to stop
    (time.monotonic())."""
    process = subprocess.Popen(
        [*command, "--socket", str(socket), "--json", str(out), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    control = Control(socket)
    try:
        delivering = first_delivery(control, process)
        time.sleep(2.0)
        for change in changes:
            try:
                # A change never answered stays out of the table's rows, and its round says so.
                control.answer_of(change(control), timeout_s=10.0)
            except SetupError as refusal:  # e.g. a scale-in still being made: the round's results list it
                print(f"  refused: {refusal}", file=sys.stderr, flush=True)
            time.sleep(SETTLE_S)
            if after_each:
                after_each()
        stopped_at = time.monotonic()
        control.stop()
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return json.loads(out.read_text()), delivering, stopped_at


def one_round(spec: Path, scheduler: str, work: Path, previous_stop: float | None) -> dict:
    """A service under `scheduler`: its changes; the restart is the time from `previous_stop` to its first delivery."""
    ready = ",".join(sorted(set(SWITCH_TO.values())))  # every switch target, this scheduler's among them
    command = [str(HERE.parent / "tandem"), "serve", str(spec), "--scheduler", scheduler, "--ready-for", ready]
    changes = [
        lambda control: control.set_args("fw2", NEW_ARGS),
        lambda control: control.set_scheduler(SWITCH_TO[scheduler]),
        lambda control: control.set_scheduler(scheduler),
        lambda control: control.set_instances("fw2", 2),  # the autoscaler's mechanism by command: its rule waits
        lambda control: control.set_instances("fw2", 1),
        lambda control: control.remove_chain("side"),
        lambda control: control.add_chain(ADDED_CHAIN),
        lambda control: control.add_port(WIRE_PORT),
        lambda control: control.remove_port(WIRE_PORT["name"]),
    ]
    results, delivering, stopped_at = serve_with_changes(
        command, work / "control.sock", work / f"{scheduler}.json", changes
    )
    return {
        "scheduler": scheduler,
        "changes": results["changes"],
        "exact": results["accounting"]["exact"],
        "restart_s": None if previous_stop is None else delivering - previous_stop,
        "stopped_at": stopped_at,
        "delivered_mpps": results["chains"][0].get("delivered_mpps"),
    }


def rounds_of(spec_text: str, repeat: int, schedulers: list[str], one_round) -> list[dict]:
    """`one_round(spec, scheduler, work, previous_stop)` for each scheduler in each of `repeat` rounds, in a folder of
    their own, each service's start timed from the stop of the one before."""
    rounds = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        spec = work / "spec.yaml"
        spec.write_text(spec_text)
        previous_stop = None
        for index in range(repeat):
            for scheduler in schedulers:
                print(f"[round {index + 1}/{repeat}] {scheduler}", file=sys.stderr, flush=True)
                outcome = one_round(spec, scheduler, work, previous_stop)
                previous_stop = outcome.pop("stopped_at")
                rounds.append(outcome | {"round": index})
    return rounds


def measure(repeat: int, rate: str, schedulers: list[str]) -> dict:
    rounds = rounds_of(SPEC.format(rate=rate), repeat, schedulers, one_round)
    return {"machine": machine_description(), "rate": rate, "repeat": repeat, "rounds": rounds}


def kind_of(change: dict, scheduler: str) -> str | None:
    if change["op"] == "set_args":
        return "new firewall rules"
    if change["op"] == "set_instances":  # `auto` changes no count: not a change to the traffic
        before, after = change["instances_before"], change["instances"]
        return None if before == after else f"scale {'out' if after > before else 'in'} to {after}"
    if change["op"] == "remove_chain":
        return "remove the other chain"
    if change["op"] == "add_chain":
        return "add a chain"
    if change["op"] in ("add_port", "remove_port"):
        return f"{change['op'].partition('_')[0]} a wire port"
    return f"switch to {change['scheduler']}" if change["scheduler"] != scheduler else "switch back"


def took_us(change: dict) -> float | None:
    """What the change itself took: a build, a switch, flows moved to their new instances, a chain drained or
    started."""
    if change["op"] in ("set_instances", "remove_chain", "add_chain"):
        return (change["t_done"] - change["t_requested"]) * 1e6
    return change.get("build_us") or change.get("switch_us") or change.get("open_us") or change.get("close_us")


def median(values: list) -> float | None:
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def rows(document: dict) -> list[dict]:
    """Per scheduler and kind of change, the medians over the rounds; and each scheduler's restart."""
    out = []
    for scheduler in dict.fromkeys(r["scheduler"] for r in document["rounds"]):
        runs = [r for r in document["rounds"] if r["scheduler"] == scheduler]
        kinds: dict[str, list[dict]] = {}
        for run in runs:
            for change in run["changes"]:
                if change["state"] == "applied" and kind_of(change, scheduler):
                    kinds.setdefault(kind_of(change, scheduler), []).append(change)
        for kind, changes in kinds.items():
            costs = [change.get("cost") or {} for change in changes]
            out.append(
                {
                    "scheduler": scheduler,
                    "change": kind,
                    "n": len(changes),
                    "ring_drops": median([cost.get("ring_drops_in_window") for cost in costs]),
                    "ring_drops_before": median([cost.get("ring_drops_before") for cost in costs]),
                    "gave_up": median([cost.get("generator_fell_behind_in_window") for cost in costs]),
                    "gave_up_before": median([cost.get("generator_fell_behind_before") for cost in costs]),
                    "deficit_ms": median([cost.get("deficit_ms") for cost in costs]),
                    "deficit_noise_ms": median([cost.get("deficit_noise_ms") for cost in costs]),
                    "latency_max_us": median([cost.get("latency_max_during_us") for cost in costs]),
                    "latency_before_us": median([cost.get("latency_max_before_us") for cost in costs]),
                    "took_us": median([took_us(change) for change in changes]),
                }
            )
        restarts = [run["restart_s"] for run in runs if run["restart_s"] is not None]
        if restarts:
            out.append(
                {
                    "scheduler": scheduler,
                    "change": "stop and start again",
                    "n": len(restarts),
                    "ring_drops": None,
                    "ring_drops_before": None,
                    "gave_up": None,
                    "gave_up_before": None,
                    "deficit_ms": median(restarts) * 1e3,  # no delivery at all meanwhile
                    "deficit_noise_ms": None,
                    "latency_max_us": None,
                    "latency_before_us": None,
                    "took_us": median(restarts) * 1e6,
                }
            )
    return out


def report(document: dict) -> str:
    def fmt(value, digits=1):
        return "n/a" if value is None else f"{value:,.{digits}f}"

    lines = [
        f"Live changes under {document['rate']} of 64-byte packets through three firewalls (200 ACL rules each; the "
        f"middle one scaled, up to two instances) on one NF core, beside a light chain at 5 kpps, "
        f"{document['repeat']} rounds, medians; on {document['machine']}",
        "window: from the request to 300 ms after the change; before: the 200 ms before the request. short: delivery "
        "below the rate before, in ms of that rate (a restart delivers nothing from its stop to its first packet); "
        "noise: the same measure over the 200 ms before, scaled to the window (the sink takes packets in bursts). "
        "took: the build (on the control core, the old rules carrying the packets) or the switch; for a scaling, "
        "until every feeder moved its flows; for a removal, from the entry's close to the chain's processes reaped; "
        "for an addition, from the request to the chain joining the run (its processes started one by one); "
        "for a wire port, its device opened (once its VXLAN was made) or closed on a thread of the manager's, its "
        "loop going on; "
        "for a restart, from the stop to the first delivered packet. Delivery and latency are both chains': a "
        "removal's short includes the removed chain's own 5 kpps (1.4 ms of the 300 ms window). gave up: packets "
        "due in the window that the generator gave up, the change having stalled the control core beyond the 4096 "
        "packets it makes up (never generated, so in no drop count; n/a: measured before the generator counted them).",
        "",
        table(
            [
                "scheduler",
                "change",
                "n",
                "ring drops",
                "(before)",
                "gave up",
                "(before)",
                "short ms",
                "(noise)",
                "latency max us",
                "(before)",
                "took",
            ],
            [
                [
                    row["scheduler"],
                    row["change"],
                    row["n"],
                    fmt(row["ring_drops"], 0),
                    fmt(row["ring_drops_before"], 0),
                    fmt(row["gave_up"], 0),
                    fmt(row["gave_up_before"], 0),
                    fmt(row["deficit_ms"]),
                    fmt(row["deficit_noise_ms"]),
                    fmt(row["latency_max_us"], 0),
                    fmt(row["latency_before_us"], 0),
                    "n/a" if row["took_us"] is None else f"{row['took_us'] / 1e3:,.2f} ms",
                ]
                for row in rows(document)
            ],
        ),
        "",
        "exact accounting in every run: " + ("yes" if all(r["exact"] for r in document["rounds"]) else "NO"),
    ]
    refused = [(r["scheduler"], c) for r in document["rounds"] for c in r["changes"] if c["state"] != "applied"]
    lines.append("changes not made: " + ("none" if not refused else ""))
    for scheduler, change in refused:
        first = (change.get("errors") or [{}])[0]
        lines.append(f"- {scheduler}, {change['op']}: {first.get('message', change['state'])}")
    return "\n".join(lines)


def plot(document: dict) -> None:
    """Per scheduler, the delivery each kind of change fell short by (ms of the rate before), restart included:
    a log scale, since a restart costs seconds and a live change milliseconds or nothing."""
    table_rows = [row | {"kind": "switch away" if row["change"].startswith("switch to") else row["change"]}
                  for row in rows(document)]  # fmt: skip
    schedulers = list(dict.fromkeys(row["scheduler"] for row in table_rows))
    kinds = list(dict.fromkeys(row["kind"] for row in table_rows))
    figure, axis = plt.subplots(figsize=(12, 4.5))
    width = 0.8 / max(1, len(kinds))
    colours = ["#9DB4D6", "#7FB77E", "#C8A2C8", "#D9A25F", "#E6B0AA", "#A3C4BC", "#B7A57A"]
    for k, kind in enumerate(kinds):
        values, noise = [], []
        for scheduler in schedulers:
            match = [row for row in table_rows if row["scheduler"] == scheduler and row["kind"] == kind]
            values.append(max(match[0]["deficit_ms"] or 0, 0.01) if match else 0)
            noise.append(match[0]["deficit_noise_ms"] if match else None)
        places = [i + k * width for i in range(len(schedulers))]
        axis.bar(places, values, width, label=kind, color=colours[k % len(colours)])
        marked = [(x, n) for x, n in zip(places, noise, strict=True) if n]
        if marked:  # the same measure with no change: the floor a live change is read against
            axis.scatter(*zip(*marked, strict=True), marker="_", s=300, color="black", zorder=3)
    axis.scatter([], [], marker="_", s=300, color="black", label="the same, 200 ms before (noise)")
    axis.set_yscale("log")
    axis.set_xticks([i + width * (len(kinds) - 1) / 2 for i in range(len(schedulers))], schedulers)
    axis.set_ylabel("delivery short of the rate before (ms, log)")
    axis.set_title(f"Live changes against a restart, {document['rate']} through three firewalls on one core")
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(figure, "live-changes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rate", default="1 Mpps")
    parser.add_argument("--schedulers", default="coop,unis,nfvnice")
    parser.add_argument("--replot", action="store_true", help="draw the figure again from the saved result")
    args = parser.parse_args()
    document = measured_or_saved(
        "live-changes", args.replot, lambda: measure(args.repeat, args.rate, args.schedulers.split(",")), report
    )
    plot(document)


if __name__ == "__main__":
    main()
