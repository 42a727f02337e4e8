"""auto's latency model against the latency each policy's packets had below saturation: a chain of three
2,000-cycle NFs on one core offered 5, 30 and 60 % of what rtc delivered at full load in the same run, under rtc,
rtc-sleep (rtc whose worker sleeps while idle), bubble, coop, nfvnice and unis; each policy's median latency (p50,
over the runs' p50s) beside what auto's model predicted for it from the run's measured costs and offered rate (auto
with objective latency runs in each round too, and its first decision holds every candidate's prediction). auto
runs twice a round: with this machine's switches, measured (what a run does when the spec leaves them unset), and
with the defaults the module had before it measured them (../DESIGN.md's figures, given as options), so the table
says which predicts the measured latencies better.

Usage (as root): .venv/bin/python bench/latency_model.py [--repeat 3] [--duration 2]
Writes bench/results/latency-model.json.gz, .md and .png. Every policy and auto run once a round, round after
round, so a slow spell of the machine falls on all of them alike.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bench.experiment_support import fmt, save_figure, save_result, stop_if_interrupted  # noqa: E402
from controlplane.experiment import pipeline  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.machine.switch_costs import MEASURED_OPTIONS  # noqa: E402
from controlplane.spec import catalog  # noqa: E402
from controlplane.spec.deployment import run_config  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402
from tandem import Spec  # noqa: E402

LOADS = (0.05, 0.3, 0.6)  # shares of rtc's full-load rate: well below every policy's saturation
NF_CYCLES = 2000  # per packet: the NFs' own cost dwarfs a ring hop, so the switches are what differ
# Each policy as the scheduler entry that runs it; rtc-sleep is rtc's option, as auto runs it.
POLICIES = {
    "rtc": {"name": "rtc"},
    "rtc-sleep": {"name": "rtc", "options": {"idle": "sleep"}},
    "bubble": {"name": "bubble"},
    "coop": {"name": "coop"},
    "nfvnice": {"name": "nfvnice"},
    "unis": {"name": "unis"},
}
AUTO = {"name": "auto", "options": {"objective": "latency"}}
AUTOS = ("auto", "auto-defaults")  # with this machine's switches; with the module's defaults


def auto_with_defaults() -> dict:
    """auto with every switch cost the control plane would measure given as its default (the catalog's)."""
    [options] = [s["options"] for s in catalog.catalog()["schedulers"] if s["name"] == "auto"]
    defaults = {o["name"]: o["default"] for o in options if o["name"] in MEASURED_OPTIONS}
    return {"name": "auto", "options": {**AUTO["options"], **defaults}}


def chain_spec(rate, scheduler: dict) -> Spec:
    nfs = [{"name": f"n{i}", "type": "cost", "core": 1, "args": {"cycles": NF_CYCLES}} for i in range(1, 4)]
    return Spec.model_validate(
        {
            "name": "latency-model",
            "warmup": 0.5,
            "traffic": {"rate": rate, "size": 64, "flows": 16},
            "scheduler": scheduler,
            "chains": [{"name": "c", "nfs": nfs}],
        }
    )


def one_run(rate, scheduler: dict, duration: float) -> dict | None:
    spec = chain_spec(rate, scheduler)
    outcome = pipeline.run(run_config(spec, None, duration), f"bench {spec.name}", lambda event: None)
    stop_if_interrupted(outcome)
    if outcome.results is None:
        print(f"{scheduler['name']} at {rate}: the run failed: {outcome.error}", file=sys.stderr, flush=True)
    return outcome.results


def measure(repeat: int, duration: float) -> dict:
    full = one_run("max", POLICIES["rtc"], duration)
    if full is None:
        raise SystemExit("latency-model: rtc's run at full load failed, so there is no load to scale from")
    capacity_pps = full["chains"][0]["window"]["delivered_mpps"] * 1e6
    runs: dict[str, dict[str, list]] = {str(load): {name: [] for name in [*POLICIES, *AUTOS]} for load in LOADS}
    autos = [("auto", AUTO), ("auto-defaults", auto_with_defaults())]
    for round_ in range(repeat):
        for load in LOADS:
            rate = round(load * capacity_pps)
            for name, scheduler in [*POLICIES.items(), *autos]:
                print(f"round {round_ + 1}/{repeat}, {load:.0%} of rtc's rate: {name}", file=sys.stderr, flush=True)
                runs[str(load)][name].append(one_run(rate, scheduler, duration))
    return {
        "repeat": repeat,
        "duration": duration,
        "machine": machine_description(),
        "capacity_pps": capacity_pps,
        "runs": runs,
    }


def measured_p50(results: list) -> float | None:
    values = [r["chains"][0]["latency_us"]["p50"] for r in results if r and r["chains"][0]["latency_us"]]
    return statistics.median(values) if values else None


def predicted(autos: list, policy: str) -> float | None:
    """The median over auto's runs of its first decision's prediction for `policy`."""
    values = [
        prediction["latency_us"]
        for r in autos
        if r
        for prediction in r["scheduler"]["report"]["decisions"][0]["predictions"]
        if prediction["policy"] == policy and "latency_us" in prediction
    ]
    return statistics.median(values) if values else None


def compared(document: dict):
    """(load, policy, predicted us with this machine's switches, predicted us with the defaults, measured p50 us,
    whether auto chose it) for every load and policy."""
    for load in LOADS:
        by_policy = document["runs"][str(load)]
        chosen = {r["scheduler"]["report"]["policy"] for r in by_policy["auto"] if r}
        for policy in POLICIES:
            yield (
                load,
                policy,
                predicted(by_policy["auto"], policy),
                predicted(by_policy["auto-defaults"], policy),
                measured_p50(by_policy[policy]),
                policy in chosen,
            )


def measured_over(model: float | None, seen: float | None) -> float | None:
    """What was measured over what was predicted; None where either is missing."""
    return None if model is None or not seen else seen / model


def off_by(model: float | None, seen: float | None) -> float | None:
    """How far a prediction is from what was measured, as a factor >= 1 either way."""
    if not model or not seen:
        return None
    return max(seen / model, model / seen)


def rows(document: dict) -> list[list[str]]:
    out = []
    for load, policy, model, default_model, seen, chosen in compared(document):
        out.append(
            [
                f"{load:.0%}",
                f"{load * document['capacity_pps'] / 1e3:.0f}",
                policy,
                fmt(seen, 1),
                fmt(model, 1),
                fmt(measured_over(model, seen), 2),
                fmt(default_model, 1),
                fmt(measured_over(default_model, seen), 2),
                "yes" if chosen else "",
            ]
        )
    return out


def median_off_by(document: dict) -> tuple[float | None, float | None]:
    """The median factor between prediction and measurement over every load and policy: this machine's switches,
    the defaults."""
    measured_costs, defaults = [], []
    for _, _, model, default_model, seen, _ in compared(document):
        if (factor := off_by(model, seen)) is not None:
            measured_costs.append(factor)
        if (factor := off_by(default_model, seen)) is not None:
            defaults.append(factor)
    return (
        statistics.median(measured_costs) if measured_costs else None,
        statistics.median(defaults) if defaults else None,
    )


def switch_costs_used(document: dict) -> str:
    """The switch costs auto's runs charged with this machine's switches (the first run's: one cache for all)."""
    for load in LOADS:
        for run in document["runs"][str(load)]["auto"]:
            if run and run.get("switch_costs"):
                return ", ".join(
                    f"{option} {source['ns']:,.0f}" for option, source in run["switch_costs"].items() if "ns" in source
                )
    return "none recorded"


def report(document: dict) -> str:
    headers = [
        "load",
        "kpps",
        "policy",
        "measured p50 us",
        "predicted us",
        "measured / predicted",
        "with defaults us",
        "measured / with defaults",
        "auto chose",
    ]
    mine, defaults = median_off_by(document)
    return (
        f"auto's latency model below saturation: three {NF_CYCLES}-cycle NFs on core 1 at shares of rtc's full-load "
        f"rate ({document['capacity_pps'] / 1e6:.3f} Mpps in this run); measured: the median of the runs' p50 "
        "latencies; predicted: auto's model from the run's measured costs and offered rate, with this machine's "
        f"switches (ns: {switch_costs_used(document)}); with defaults: the same model with the module's default "
        f"switch costs\n{document['repeat']} rounds x {document['duration']} s on {document['machine']}\n"
        f"median factor between prediction and measurement: {fmt(mine, 2)} with this machine's switches, "
        f"{fmt(defaults, 2)} with the defaults\n\n" + table(headers, rows(document), align_left=3)
    )


def plot(document: dict) -> None:
    figure, axes = plt.subplots(figsize=(6.4, 5))
    markers = {str(load): marker for load, marker in zip(LOADS, "os^", strict=True)}
    colours = dict(zip(POLICIES, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    points = []
    for load, policy, model, default_model, seen, _ in compared(document):
        if seen is None:
            continue
        if model is not None:
            points += [model, seen]
            axes.scatter(model, seen, marker=markers[str(load)], color=colours[policy], s=50)
        if default_model is not None:  # hollow: the same prediction with the default switch costs
            points += [default_model, seen]
            axes.scatter(default_model, seen, marker=markers[str(load)], facecolors="none", edgecolors=colours[policy])
    low, high = min(points) / 1.5, max(points) * 1.5
    axes.plot([low, high], [low, high], color="grey", linewidth=1, label="measured = predicted")
    for policy, colour in colours.items():
        axes.scatter([], [], color=colour, label=policy)
    for load, marker in markers.items():
        axes.scatter([], [], marker=marker, color="black", label=f"{float(load):.0%} of rtc's rate")
    axes.scatter([], [], marker="o", facecolors="none", edgecolors="black", label="hollow: default switch costs")
    axes.set(xscale="log", yscale="log", xlim=(low, high), ylim=(low, high))
    axes.set(xlabel="predicted by auto's model (us)", ylabel="measured median latency (us)")
    axes.set_title("auto's latency model below saturation")
    axes.legend(fontsize=8)
    save_figure(figure, "latency-model")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=2.0)
    args = parser.parse_args()
    document = measure(args.repeat, args.duration)
    save_result("latency-model", document, report(document))
    plot(document)
    return 0


if __name__ == "__main__":
    sys.exit(main())
