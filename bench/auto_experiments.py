"""`auto` against every single scheduler. goal: on each example a single core holds, and on a stepped-rate run,
auto's delivered rate over the best single scheduler's of the same round (a median of at least 0.95), and what auto
chose. latency: the same with objective latency, auto's p99 over the lowest single p99 of each round (a median of
at most 1.1). mixed: a core of native NFs and an unmodified testpmd under auto, hybrid and every single policy that
can run an unmodified process. idle: the NF core's CPU and every packet's latency of an 8-NF chain offered a packet
every 100 ms and every millisecond, per scheduler. timeline: a stepped-rate run under auto, its offered and
delivered rates and its decisions over time; timeline-layouts: the same between policies of two layouts.

Usage (as root): .venv/bin/python bench/auto_experiments.py [--repeat 3] [--duration 1]
    [--only goal|latency|mixed|idle|timeline|timeline-layouts] [--workload NAME]
Writes bench/results/auto-{goal,latency,mixed,idle,timeline,timeline-layouts}.json.gz, .md and .png. Each workload
is one comparison in interleaved rounds (every scheduler once a round), so a ratio inside a round cancels the
machine's drift; the medians are of those ratios. goal --workload NAME measures that workload again and keeps the
others' saved comparisons.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from scipy import stats  # noqa: E402

from bench.experiment_support import (  # noqa: E402
    RESULTS,
    fmt,
    mpps,
    read_result,
    run,
    run_selected,
    save_result,
    stop_if_interrupted,
)
from controlplane.errors import SpecError  # noqa: E402
from controlplane.experiment import pipeline  # noqa: E402
from controlplane.launch.service_status import bound_of_percentile  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.results.comparison_rounds import round_ratios, rounds_of  # noqa: E402
from controlplane.spec import catalog  # noqa: E402
from controlplane.spec.deployment import run_config  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402
from tandem import Spec, load_spec  # noqa: E402

SINGLES = ["rtc", "bubble", "coop", "unis", "nfvnice", "scc", "cfs"]
# Where an unmodified process leaves only the policies that switch processes from outside: the kernel's others too.
PROCESS_SINGLES = ["unis", "scc", "cfs", "batch", "rr", "fifo"]
GOAL = 0.95
# The examples whose NFs share core 1 and whose traffic is the generator's (the lab examples' clients set their own
# load, and a lab takes minutes to build: they are left to bench/lab_experiments.py).
EXAMPLES = [
    "three-firewalls",
    "light-chain",
    "heterogeneous",
    "parallel-graph",
    "pcap-replay",
    "http-waf",
    "scale-out",
    "testpmd-chain",
    "native-and-testpmd",
    "kernel-chain",
    "mixed-chain",
]


def stepped(steps: tuple[str, ...] = ("20 kpps", "50 Mpps"), options: dict | None = None) -> Spec:
    """A light chain whose rate moves between a trickle and more than the core holds, every 1.5 s."""
    return Spec.model_validate(
        {
            "name": "stepped-rate",
            "ring_capacity": 4096,
            "traffic": {"rate_steps": list(steps), "step_seconds": 1.5, "size": 64, "flows": 64},
            "scheduler": {"name": "auto", "options": options or {}},
            "chains": [
                {
                    "name": "c",
                    "nfs": [{"name": f"n{i}", "type": "cost", "core": 1, "args": {"ns": 100}} for i in range(3)],
                }
            ],
        }
    )


def accepting(spec: Spec, names: list[str]) -> list[str]:
    """The schedulers that can run the spec (kernel-I/O and external NFs run under some only)."""
    able = []
    for name in names:
        try:
            catalog.check(run_config(spec, name), spec.name)
            able.append(name)
        except SpecError:
            pass
    return able


def auto_choices(comparison: dict) -> str:
    """What auto ran, run by run: its start policy, and where it switched, what it switched to."""
    chosen = []
    for results in comparison["schedulers"]["auto"]["results"]:
        report = results["scheduler"]["report"]
        start = report["decisions"][0]["policy"]
        chosen.append(start if report["policy"] == start else f"{start}->{report['policy']}")
    return ", ".join(sorted(set(chosen))) or "failed"


def ratios_to_best(comparison: dict, metric: str = "delivered_mpps") -> tuple[list[float], list[str], list[int]]:
    """Per round: auto's `metric` over the highest of any single scheduler in that round, which single that was, and
    the round. A round without both is left out."""
    best: dict[int, tuple[float, str]] = {}
    for name, entry in comparison["schedulers"].items():
        if name == "auto":
            continue
        for round_, summary in zip(rounds_of(entry["runs"]), entry["runs"], strict=True):
            value = summary.get(metric)
            if value and (round_ not in best or value > best[round_][0]):
                best[round_] = (value, name)
    auto_runs = comparison["schedulers"]["auto"]["runs"]
    kept = [
        (summary[metric] / best[round_][0], best[round_][1], round_)
        for round_, summary in zip(rounds_of(auto_runs), auto_runs, strict=True)
        if summary.get(metric) is not None and round_ in best
    ]
    return [r for r, _, _ in kept], [name for _, name, _ in kept], [round_ for _, _, round_ in kept]


# The machine's own speed, run by run: the generator's cycles to build a packet where it runs flat out (rate: max),
# work that no scheduler changes (it runs on the control core, a template copied into each buffer; at a fixed rate
# it builds one now and then, from cold caches, and its cycles say little of the machine). This VM has spells in
# which every run, whatever its scheduler, takes 3-4x its usual cycles for it and delivers a half to two thirds of
# its usual rate; a round's ratio of a run inside such a spell to one outside it says how the host changed, not the
# scheduler.
SLOW_MACHINE = 2.0


def slow_machine_runs(comparison: dict) -> dict[str, set[int]]:
    """By scheduler, the rounds whose run found the machine slow: its generator took at least SLOW_MACHINE times the
    comparison's median cycles a packet."""
    cycles = {
        name: [result.get("generator_build_cycles_per_packet") for result in entry["results"]]
        for name, entry in comparison["schedulers"].items()
        if len(entry["results"]) == len(entry["runs"])
    }
    measured = [value for values in cycles.values() for value in values if value]
    if not measured:
        return {}
    usual = statistics.median(measured)
    return {
        name: {
            round_
            for round_, value in zip(rounds_of(comparison["schedulers"][name]["runs"]), values, strict=True)
            if value and value >= SLOW_MACHINE * usual
        }
        for name, values in cycles.items()
    }


def generator_flat_out(name: str) -> bool:
    """Whether the workload is an example whose generator offers all it can (rate: max) to a chain."""
    if name not in EXAMPLES:
        return False
    spec = load_spec(HERE.parent / "examples" / f"{name}.yaml")
    default = spec.traffic.rate if spec.traffic else None
    return any(((chain.traffic and chain.traffic.rate) or default) == "max" for chain in spec.chains)


def ratios_at_speed(
    comparison: dict, flat_out: bool, to_best: tuple[list[float], list[str], list[int]]
) -> tuple[list[bool], list[float]]:
    """Per round of `to_best` (ratios_to_best's answer), whether the machine was slow (the generator ran flat out and
    auto's run or the best single's found it slow: the report's *, the plot's x), and the ratios of the rounds in
    which neither did."""
    ratios, best_names, rounds = to_best
    slow = slow_machine_runs(comparison) if flat_out else {}
    slow_rounds = [
        round_ in slow.get("auto", set()) or round_ in slow.get(best, set())
        for best, round_ in zip(best_names, rounds, strict=True)
    ]
    return slow_rounds, [ratio for ratio, hit in zip(ratios, slow_rounds, strict=True) if not hit]


def measure(
    names: list[str], repeat: int, duration: float, auto_options: dict | None = None, singles: list[str] | None = None
) -> dict:
    """Each workload under auto and the single schedulers that can run it (`singles`: these only; else every one)."""
    comparisons = {}
    for name in names:
        spec = (
            stepped(options=auto_options)
            if name == "stepped-rate"
            else load_spec(HERE.parent / "examples" / f"{name}.yaml")
        )
        if auto_options and name != "stepped-rate":
            spec = spec.model_copy(update={"scheduler_options": {**spec.scheduler_options, "auto": auto_options}})
        external = any(nf.type == "external" for chain in spec.chains for nf in chain.nfs or [])
        every = [*SINGLES, *(n for n in PROCESS_SINGLES if n not in SINGLES)] if external else SINGLES
        schedulers = accepting(spec, [*(singles or every), "auto"])
        if "auto" not in schedulers:
            print(f"{name}: auto cannot run it; left out", file=sys.stderr)
            continue
        comparisons[name] = run(spec, schedulers, repeat, max(duration, 3.0) if name == "stepped-rate" else duration)
    return comparisons


def report(document: dict) -> str:
    rows = []
    for name, comparison in document["comparisons"].items():
        to_best = ratios_to_best(comparison)
        ratios, best_names, _ = to_best
        median = statistics.median(ratios) if ratios else None
        slow_rounds, at_speed = ratios_at_speed(comparison, generator_flat_out(name), to_best)
        shown = [f"{ratio:.2f}{'*' if hit else ''}" for ratio, hit in zip(ratios, slow_rounds, strict=True)]
        auto_mpps = (comparison["schedulers"]["auto"]["median"] or {}).get("delivered_mpps")
        rows.append(
            [
                name,
                auto_choices(comparison),
                ", ".join(sorted(set(best_names))) or "-",
                fmt(auto_mpps),
                " ".join(shown) or "-",
                fmt(median, 2),
                "-" if median is None else ("met" if median >= GOAL else "missed"),
                fmt(statistics.median(at_speed) if at_speed else None, 2),
            ]
        )
    return (
        f"auto against the best single scheduler of each round (goal: median >= {GOAL}); *: at rate: max, a round in "
        f"which auto's run or that scheduler's found the machine slow (its generator took at least {SLOW_MACHINE:g}x "
        f"the comparison's median cycles to build a packet); at speed: the median of the other rounds\n"
        f"{document['repeat']} rounds x {document['duration']} s (stepped-rate: 3 s) on {document['machine']}\n\n"
        + table(
            [
                "workload",
                "auto ran",
                "best single",
                "auto Mpps",
                "auto / best, per round",
                "median",
                "goal",
                "at speed",
            ],
            rows,
        )
    )


def plot(document: dict, path: Path) -> None:
    """Per workload: the median ratio of every round and of the rounds at speed, and each round's ratio (x: a round
    in which the machine was slow, as the table's *)."""
    names, medians, medians_at_speed, points = [], [], [], []
    for name, comparison in document["comparisons"].items():
        to_best = ratios_to_best(comparison)
        if not to_best[0]:
            continue
        slow_rounds, at_speed = ratios_at_speed(comparison, generator_flat_out(name), to_best)
        names.append(name)
        medians.append(statistics.median(to_best[0]))
        medians_at_speed.append(statistics.median(at_speed) if at_speed else None)
        points.append(list(zip(to_best[0], slow_rounds, strict=True)))
    fig, ax = plt.subplots(figsize=(9, 3.8))
    x = list(range(len(names)))
    ax.bar([i - 0.2 for i in x], medians, width=0.4, color="lightgray", edgecolor="gray", label="median, every round")
    ax.bar(
        [i + 0.2 for i in x],
        [m or 0 for m in medians_at_speed],
        width=0.4,
        color=["tab:green" if (m or 0) >= GOAL else "tab:red" for m in medians_at_speed],
        label="median at speed",
    )
    for i, rounds in zip(x, points, strict=True):
        for slow in (False, True):
            ys = [ratio for ratio, hit in rounds if hit == slow]
            if ys:
                ax.scatter(
                    [i] * len(ys),
                    ys,
                    marker="x" if slow else "o",
                    s=18,
                    color="black",
                    zorder=3,
                    label="a round, machine slow" if slow else "a round",
                )
    ax.axhline(GOAL, color="black", linestyle="--", linewidth=1, label=f"goal {GOAL}")
    ax.set_xticks(x, names, rotation=35, ha="right")
    ax.set_ylabel("auto / best single")
    top = max([1.2, *medians, *(r for rounds in points for r, _ in rounds)])
    ax.set_ylim(0, top * 1.05)
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    ax.legend(unique.values(), unique.keys(), loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


LATENCY_GOAL = 1.1
# The examples whose schedulers' latencies differ (a fixed rate that every policy carries leaves each NF's ring all but
# empty: a turn, not a queue), and the mixed cores.
LATENCY_WORKLOADS = [
    "three-firewalls",
    "light-chain",
    "heterogeneous",
    "http-waf",
    "testpmd-chain",
    "native-and-testpmd",
]


# The kernel's policies and scc are left out: their p99 is 50-1000x the others' (bench/results/auto-goal.json.gz
# holds their runs), so they are never the lowest, and leaving them out buys rounds.
LATENCY_SINGLES = ["rtc", "bubble", "coop", "unis", "nfvnice"]
# rtc and bubble as auto runs them: their one worker a core real-time, as coop's and unis's are by default (under the
# normal policy the VM's own tasks preempt it, and its p99 is theirs: docs/results/auto.md).
LATENCY_OPTIONS = {"rtc": {"policy": "fifo"}, "bubble": {"policy": "fifo"}}


def per_round(comparison: dict, name: str, metric: str) -> dict[int, float]:
    """A scheduler's `metric` by round, where it has one."""
    runs = comparison["schedulers"][name]["runs"]
    return {r: s[metric] for r, s in zip(rounds_of(runs), runs, strict=True) if s.get(metric)}


def lowest_median(comparison: dict, metric: str) -> str | None:
    """The single scheduler whose median `metric` is the lowest: the one a user who measured them all would pick."""
    medians = {
        name: statistics.median(values)
        for name in comparison["schedulers"]
        if name != "auto" and (values := list(per_round(comparison, name, metric).values()))
    }
    return min(medians, key=medians.get) if medians else None


def ratios_in_rounds(numerator: dict[int, float], denominator: dict[int, float]) -> list[float]:
    return [numerator[r] / denominator[r] for r in sorted(numerator) if r in denominator]


# A p99 of a few seconds on this VM is the packets its stalls caught: one round's ratio of two runs of the same policy
# spans 0.02-21 (docs/results/auto.md). How far the median of a few such ratios may be from the ratio itself is what
# a bootstrap over the rounds says (scipy.stats.bootstrap; seeded, so that a saved result renders the same table).
CONFIDENCE = 0.95


def median_interval(ratios: list[float]) -> tuple[float, float] | None:
    """The CONFIDENCE bootstrap interval of the median of `ratios` (None: fewer than three, or all alike)."""
    if len(ratios) < 3 or len(set(ratios)) == 1:
        return None
    interval = stats.bootstrap(
        (np.array(ratios),),
        np.median,
        confidence_level=CONFIDENCE,
        method="percentile",
        n_resamples=9999,
        random_state=np.random.default_rng(0),
    ).confidence_interval
    return float(interval.low), float(interval.high)


def latency_verdict(median: float | None, interval: tuple[float, float] | None) -> str:
    """met: the median within the goal; missed: the whole interval above it; unclear: the median above, but the
    rounds do not tell it apart from the goal (the interval reaches it)."""
    if median is None:
        return "-"
    if median <= LATENCY_GOAL:
        return "met"
    return "unclear" if interval is not None and interval[0] <= LATENCY_GOAL else "missed"


# The latency goal's load: this share of the least that any compared scheduler delivered in a first round at the
# workload's own rate, where one of them did not carry that rate (rate: max, or more than a policy keeps up with).
# Past saturation a p99 is the time a full ring takes to drain, alike for every policy but for this VM's noise:
# 15 rounds at the examples' own rates had rtc against itself at 0.26-2.36 a round on three-firewalls (rate: max).
LATENCY_LOAD = 0.7


def below_saturation(spec: Spec, schedulers: list[str], duration: float) -> tuple[Spec, float | None]:
    """`spec` at LATENCY_LOAD of the least that `schedulers` delivered in one round at its own rate, each chain's
    rate scaled alike (a chain at `max` an equal share), where that least is below what it offers; and the Mpps then
    offered (None: its own rate, which every scheduler carried)."""
    probe = run(spec, schedulers, 1, duration)
    least = min((mpps(probe, name) or 0.0) for name in schedulers) * 1e6
    offered = [chain["traffic"]["mean_rate_pps"] for chain in run_config(spec, schedulers[0])["chains"]]
    if all(offered) and least >= 0.98 * sum(offered):
        return spec, None
    rates = [LATENCY_LOAD * least * share for share in _shares(offered)]
    chains = [
        chain.model_copy(update={"traffic": chain.traffic.model_copy(update={"rate": rate})})
        for chain, rate in zip(spec.chains, rates, strict=True)
    ]
    return spec.model_copy(update={"chains": chains}), sum(rates) / 1e6


def _shares(offered: list[float]) -> list[float]:
    """Each chain's share of the offer: as offered, or alike where a chain takes what it can (rate: max)."""
    if all(offered):
        return [rate / sum(offered) for rate in offered]
    return [1 / len(offered)] * len(offered)


def latency(repeat: int, duration: float, render: bool = False) -> None:
    """auto's p99 against the single scheduler of the lowest median p99, round by round (the goal), and against the
    lowest p99 of any single scheduler in each round, below every compared scheduler's saturation
    (below_saturation). The second picks, each round, the luckiest of several noisy runs, so it is biased low: the
    best single scheduler measured the same way says by how much. render: the table again from the saved result."""
    if render:
        document = read_result("auto-latency")
        save_result("auto-latency", document, latency_report(document))
        return
    comparisons, loads = {}, {}
    for name in LATENCY_WORKLOADS:
        spec = load_spec(HERE.parent / "examples" / f"{name}.yaml")
        spec = spec.model_copy(
            update={
                "scheduler_options": {**spec.scheduler_options, **LATENCY_OPTIONS, "auto": {"objective": "latency"}}
            }
        )
        singles = accepting(spec, LATENCY_SINGLES)
        if not singles or not accepting(spec, ["auto"]):
            print(f"{name}: auto or every single scheduler cannot run it; left out", file=sys.stderr)
            continue
        spec, loads[name] = below_saturation(spec, singles, duration)
        comparisons[name] = run(spec, [*singles, "auto"], repeat, duration)
    document = {
        "repeat": repeat,
        "duration": duration,
        "load_share": LATENCY_LOAD,
        "single_options": LATENCY_OPTIONS,
        "machine": machine_description(),
        "offered_mpps": loads,
        "comparisons": comparisons,
    }
    save_result("auto-latency", document, latency_report(document))


def options_said(options: dict) -> str:
    """The single schedulers' options other than their defaults, as the report says them."""
    said = [f"{name} with {', '.join(f'{k}: {v}' for k, v in given.items())}" for name, given in options.items()]
    return f"; {'; '.join(said)}" if said else ""


def latency_report(document: dict) -> str:
    rows = []
    for name, comparison in document["comparisons"].items():
        best = lowest_median(comparison, "p99_us")
        auto = per_round(comparison, "auto", "p99_us")
        lowest: dict[int, float] = {}  # the lowest single p99 of each round
        for other in comparison["schedulers"]:
            if other != "auto":
                for r, value in per_round(comparison, other, "p99_us").items():
                    lowest[r] = min(value, lowest.get(r, value))
        best_runs = per_round(comparison, best, "p99_us") if best else {}
        ratios = ratios_in_rounds(auto, best_runs)
        auto_to_lowest, best_to_lowest = ratios_in_rounds(auto, lowest), ratios_in_rounds(best_runs, lowest)
        median = statistics.median(ratios) if ratios else None
        interval = median_interval(ratios)
        auto_median = comparison["schedulers"]["auto"]["median"] or {}
        offered = document.get("offered_mpps", {}).get(name)
        rows.append(
            [
                name,
                "its own" if offered is None else fmt(offered),
                auto_choices(comparison),
                best or "-",
                fmt(auto_median.get("p99_us"), 0),
                fmt(auto_median.get("delivered_mpps")),
                " ".join(f"{r:.2f}" for r in ratios) or "-",
                fmt(median, 2),
                "-" if interval is None else f"{interval[0]:.2f}-{interval[1]:.2f}",
                latency_verdict(median, interval),
                fmt(statistics.median(auto_to_lowest) if auto_to_lowest else None, 2),
                fmt(statistics.median(best_to_lowest) if best_to_lowest else None, 2),
            ]
        )
    return (
        f"auto with objective latency against the single scheduler of the lowest median p99, round by round (goal: "
        f"median <= {LATENCY_GOAL}; the median's {CONFIDENCE:.0%} bootstrap interval over the rounds, and unclear "
        f"where the median missed but the interval reaches the goal); the last two columns: auto's and that "
        f"scheduler's p99 over the lowest single p99 "
        f"of each round (the luckiest of the runs, a bound no one scheduler keeps); load: the workload's own rate "
        f"where every scheduler carried it in a first round, else {document.get('load_share', 1):.0%} of the least "
        f"one delivered{options_said(document.get('single_options', {}))}\n"
        f"{document['repeat']} rounds x {document['duration']} s on {document['machine']}\n\n"
        + table(
            [
                "workload",
                "load Mpps",
                "auto ran",
                "best single",
                "auto p99 us",
                "auto Mpps",
                "auto / best, per round",
                "median",
                f"{CONFIDENCE:.0%} interval",
                "goal",
                "auto / lowest",
                "best / lowest",
            ],
            rows,
        )
        + "\n\neach scheduler's median p99 in us over the rounds (-: it cannot run the workload):\n"
        + table(["workload", *LATENCY_SINGLES, "auto"], policy_rows(document))
        + "\n\neach scheduler's median p50 in us over the rounds (what a packet waits for when the host does not "
        "stall it: what auto's model predicts):\n"
        + table(["workload", *LATENCY_SINGLES, "auto"], policy_rows(document, "p50_us", 1))
    )


def policy_rows(document: dict, metric: str = "p99_us", digits: int = 0) -> list[list[str]]:
    """Per workload, each scheduler's median `metric` (us): how far apart the policies auto chooses among are."""
    rows = []
    for name, comparison in document["comparisons"].items():
        row = [name]
        for scheduler in [*LATENCY_SINGLES, "auto"]:
            values = (
                list(per_round(comparison, scheduler, metric).values()) if scheduler in comparison["schedulers"] else []
            )
            row.append(fmt(statistics.median(values), digits) if values else "-")
        rows.append(row)
    return rows


# Cores of native NFs beside unmodified testpmd processes; hybrid is auto's combination, measured by itself too.
MIXED_WORKLOADS = ["native-and-testpmd", "testpmd-chain"]
MIXED_SCHEDULERS = ["auto", "hybrid", *PROCESS_SINGLES]


def mixed_rows(comparison: dict) -> list[list[str]]:
    """Per scheduler: its median Mpps and p99, and its delivered rate over auto's, round by round (median)."""
    auto_runs = comparison["schedulers"]["auto"]["runs"]
    auto_by_round = {
        round_: summary["delivered_mpps"] for round_, summary in zip(rounds_of(auto_runs), auto_runs, strict=True)
    }
    rows = []
    for name, entry in comparison["schedulers"].items():
        median = entry["median"] or {}
        ratios = [r for r in round_ratios(entry["runs"], auto_by_round) if r is not None]
        rows.append(
            [
                name + (f" ({auto_choices(comparison)})" if name == "auto" else ""),
                fmt(median.get("delivered_mpps")),
                # Nothing delivered (fifo: the first NF keeps the core): no latency to tell, not a failed run.
                "-" if median.get("delivered_mpps") == 0 else fmt(median.get("p99_us"), 0),
                " ".join(f"{r:.2f}" for r in ratios) or "-",
                fmt(statistics.median(ratios) if ratios else None, 2),
            ]
        )
    return rows


def mixed(repeat: int, duration: float) -> None:
    comparisons = {}
    for name in MIXED_WORKLOADS:
        spec = load_spec(HERE.parent / "examples" / f"{name}.yaml")
        comparisons[name] = run(spec, accepting(spec, MIXED_SCHEDULERS), repeat, duration)
    text = (
        "Native NFs and an unmodified testpmd on core 1: auto (which runs hybrid there), hybrid by itself, and every "
        "single policy that can run an unmodified process; a scheduler's delivered rate over auto's of the same round\n"
        f"{repeat} rounds x {duration} s on {machine_description()}\n"
    )
    for name, comparison in comparisons.items():
        text += f"\n{name}:\n" + table(
            ["scheduler", "Mpps", "p99 us", "/ auto, per round", "median"], mixed_rows(comparison)
        )
        text += "\n"
    save_result("auto-mixed", {"repeat": repeat, "duration": duration, "comparisons": comparisons}, text.rstrip())
    fig, axes = plt.subplots(1, len(comparisons), figsize=(4.5 * len(comparisons), 3.5), squeeze=False)
    for axis, (name, comparison) in zip(axes[0], comparisons.items(), strict=True):
        names = list(comparison["schedulers"])
        rates = [(comparison["schedulers"][n]["median"] or {}).get("delivered_mpps") or 0 for n in names]
        axis.bar(names, rates, color=["tab:green" if n in ("auto", "hybrid") else "tab:gray" for n in names])
        axis.set_title(name)
        axis.set_ylabel("delivered Mpps (median)")
        axis.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(RESULTS / "auto-mixed.png", dpi=110)
    plt.close(fig)


IDLE_SCHEDULERS = ["rtc", "bubble", "coop", "unis", "nfvnice", "cfs", "auto"]
# A packet every 100 ms (a chain idle but for the packet that wakes it) and every millisecond (a trickle).
IDLE_RATES = ["10 pps", "1 kpps"]


def idle_spec(rate: str) -> Spec:
    """Eight NFs of 100 ns on core 1 offered `rate`: a chain that is idle almost all the time."""
    nfs = [{"name": f"n{i}", "type": "cost", "core": 1, "args": {"ns": 100}} for i in range(8)]
    return Spec.model_validate(
        {
            "name": "idle-chain",
            "traffic": {"rate": rate, "size": 64, "flows": 16},
            "scheduler": {"name": "auto", "options": {"objective": "efficiency"}},
            "chains": [{"name": "c", "nfs": nfs}],
        }
    )


def core_cpu_share(results: dict) -> float | None:
    """The CPU the NF processes took over the measured window, summed once per worker process (rtc's and Bubble's
    one worker runs every NF)."""
    per_worker = {nf["worker"]: nf["os"].get("cpu_share") for nf in results["nfs"]}
    shares = list(per_worker.values())
    return None if any(share is None for share in shares) else sum(shares)


def idle_run(rate: str, scheduler: str, duration: float) -> dict | None:
    """One run, every packet's latency taken (the sink samples one in 16 by default: too few at 10 pps)."""
    spec = idle_spec(rate)
    config = run_config(spec, scheduler, duration)
    config["latency_sample_every"] = 1
    outcome = pipeline.run(config, f"bench {spec.name}", lambda event: None)
    stop_if_interrupted(outcome)
    if outcome.results is None:
        print(f"idle {rate} {scheduler}: the run failed: {outcome.error}", file=sys.stderr)
    return outcome.results


def wake_floor() -> str:
    """The futex wake-ups on an idle core that `./tandem primitives` measured on this machine, if it has."""
    from controlplane.machine import primitive_latencies

    document = primitive_latencies.cached()
    if document is None:
        return "this machine's wake-up on an idle core: not measured (./tandem primitives measures it)"
    wakes = document["results"].get("idle_wake", {})
    measured = [f"idle {idle} {m['median_ns'] / 1e3:.0f} us" for idle, m in wakes.items() if "median_ns" in m]
    return "a futex wake-up on this machine's idle core 1 (./tandem primitives): " + ", ".join(measured)


def idle(repeat: int, duration: float) -> None:
    """Each rate in interleaved rounds (every scheduler once a round); medians of the runs' CPU and percentiles."""
    runs: dict[str, dict[str, list]] = {rate: {name: [] for name in IDLE_SCHEDULERS} for rate in IDLE_RATES}
    for round_ in range(repeat):
        for rate in IDLE_RATES:
            for name in IDLE_SCHEDULERS:
                print(f"idle {rate}, round {round_ + 1}/{repeat}: {name}", file=sys.stderr, flush=True)
                runs[rate][name].append(idle_run(rate, name, duration))

    def cells(results: list) -> list[str]:
        done = [r for r in results if r is not None]
        cpu = [c for c in (core_cpu_share(r) for r in done) if c is not None]
        latency = [r["chains"][0]["latency_us"] for r in done if r["chains"][0]["latency_us"]]
        p50 = statistics.median(lat["p50"] for lat in latency) if latency else None
        p99 = statistics.median(lat["p99"] for lat in latency) if latency else None
        return ["-" if not cpu else f"{100 * statistics.median(cpu):.2f} %", fmt(p50, 1), fmt(p99, 1)]

    rows = []
    for name in IDLE_SCHEDULERS:
        chosen = sorted(
            {r["scheduler"]["report"]["policy"] for r in runs[IDLE_RATES[0]][name] if r} if name == "auto" else []
        )
        rows.append(
            [name + (f" ({', '.join(chosen)})" if chosen else "")]
            + sum((cells(runs[rate][name]) for rate in IDLE_RATES), [])
        )
    headers = ["scheduler"] + [f"{column} @{rate}" for rate in IDLE_RATES for column in ("CPU", "p50 us", "p99 us")]
    text = (
        "An idle chain: 8 NFs of 100 ns on core 1 offered a packet every 100 ms (10 pps) and every millisecond "
        "(1 kpps); the NF core's CPU (the NF processes' time on a CPU per second) and every packet's latency "
        "(targets: <= 1 % and <= 50 us); auto with objective efficiency\n"
        f"median of {repeat} runs x {duration} s on {machine_description()}; {wake_floor()}\n\n" + table(headers, rows)
    )
    save_result("auto-idle", {"repeat": repeat, "duration": duration, "runs": runs}, text)


# The timelines' candidates: the policies of one process per NF (as where unmodified processes leave no other layout;
# with every candidate, efficiency runs rtc-sleep throughout, which never needs to switch), and one such policy
# against rtc's process per core, which auto reaches by re-laying the NFs out.
TIMELINES = {"auto-timeline": "coop,unis,nfvnice,cfs", "auto-timeline-layouts": "nfvnice,rtc"}


def timeline(duration: float, name: str = "auto-timeline") -> None:
    """One stepped-rate run under auto (efficiency) with live metrics: every 250 ms its offered and delivered rates and
    the latency bucket its 99th packet of the interval stayed under; and auto's decisions."""
    samples: list[dict] = []
    last: dict = {}

    def observe(event: dict) -> None:
        if event.get("event") != "progress":
            return
        latency = ((event.get("metrics") or {}).get("chains") or [{}])[0].get("latency")
        if last:
            seconds = max(event["t"] - last["t"], 1e-9)
            samples.append(
                {
                    "t_s": event["t"],
                    "offered_mpps": (event["generated"] - last["generated"]) / seconds / 1e6,
                    "delivered_mpps": event["mpps"],
                    "p99_us_under": bound_of_percentile(latency, last.get("latency"), 0.99),
                }
            )
        last.update(event, latency=latency)

    run_s = max(duration, 6.0)
    candidates = TIMELINES[name]
    options = {"objective": "efficiency", "redecide_ms": 100, "candidates": candidates}
    spec = stepped(("20 kpps", "50 Mpps", "20 kpps", "50 Mpps"), options)
    config = run_config(spec, None, run_s)
    config["live_metrics"] = True  # each progress event carries the latency histograms
    outcome = pipeline.run(config, f"bench {spec.name}", observe)
    stop_if_interrupted(outcome)
    if outcome.results is None:
        raise SystemExit(f"timeline: the run failed: {outcome.error}")
    results = outcome.results
    decisions = results["scheduler"]["report"]["decisions"]
    lines = [
        f"  {d['t_s']:.2f} s: {d['policy']} ({'applied' if d.get('applied', True) else 'advice'}): {d['reason']}"
        for d in decisions
    ]
    text = (
        f"auto (efficiency, candidates {candidates.replace(',', ', ')}) on a light chain whose rate steps 20 kpps / "
        "50 Mpps every 1.5 s, deciding every 100 ms\n"
        f"one run of {run_s} s on {machine_description()}; accounting "
        f"{'exact' if results['accounting']['exact'] else 'NOT exact'}; p99: the latency histogram's bucket the 99th "
        "packet of the interval stayed under (n/a: none delivered in it)\n\n"
        + table(
            ["t s", "offered Mpps", "delivered Mpps", "p99 us under"],
            [
                [
                    f"{s['t_s']:.2f}",
                    f"{s['offered_mpps']:.3f}",
                    f"{s['delivered_mpps']:.3f}",
                    "n/a" if s["p99_us_under"] is None else fmt(s["p99_us_under"], 0),
                ]
                for s in samples
            ],
        )
        + "\n\ndecisions:\n"
        + "\n".join(lines)
        + relayouts(results)
    )
    save_result(name, {"results": results, "samples": samples}, text)
    times = [s["t_s"] for s in samples]
    fig, (rates, latency) = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    rates.plot(times, [s["offered_mpps"] for s in samples], label="offered")
    rates.plot(times, [s["delivered_mpps"] for s in samples], label="delivered")
    rates.set_yscale("symlog", linthresh=0.01)
    rates.set_ylabel("Mpps")
    rates.legend(loc="center right")
    latency.plot(times, [s["p99_us_under"] for s in samples], color="tab:red")
    latency.set_yscale("log")
    latency.set_ylabel("p99 us (under)")
    for axis in (rates, latency):
        for d in decisions:
            axis.axvline(d["t_s"], color="gray", linestyle="-" if d.get("applied", True) else ":", linewidth=1)
    for d in decisions:
        rates.annotate(d["policy"], (d["t_s"], rates.get_ylim()[1]), rotation=90, va="top", fontsize=8)
    latency.set_xlabel("seconds (solid: auto ran it; dotted: it would, on a restart)")
    fig.tight_layout()
    fig.savefig(RESULTS / f"{name}.png", dpi=110)
    plt.close(fig)


def dropped_in_change(change: dict) -> str:
    """A re-layout's ring drops: while its new processes started beside the old layout, which carried the traffic as
    ever (an overload's drops among them), and once the entries were held (the switch's own)."""
    held = change.get("ring_drops_while_held")
    if held is None:  # a result from before the two were told apart
        return f", {change['ring_drops_during']} ring drops meanwhile"
    staged = change["ring_drops_during"] - held
    return f", {staged} ring drops before it while the new processes started, {held} while held"


def relayouts(results: dict) -> str:
    """The switches across layouts the run made, each with how long it held the chain's entry."""
    made = [change for change in results.get("changes", []) if change.get("relayout")]
    if not made:
        return ""
    return "\n\nNFs re-laid out:\n" + "\n".join(
        f"  {change['t_requested']:.2f} s: into {', '.join(w['name'] for w in change['workers'])}, the entry held "
        f"{change['held_ms']:.1f} ms (drained in {change['drain_ms']:.1f} ms, started in {change['start_ms']:.1f} ms)"
        f"{dropped_in_change(change)}"
        for change in made
    )


def goal(args) -> None:
    if args.render:
        document = read_result("auto-goal")
    else:
        names = [args.workload] if args.workload else [*EXAMPLES, "stepped-rate"]
        document = {
            "machine": machine_description(),
            "repeat": args.repeat,
            "duration": args.duration,
            "comparisons": measure(names, args.repeat, args.duration),
        }
        if args.workload and (RESULTS / "auto-goal.json.gz").exists():
            saved = read_result("auto-goal")
            if (saved["repeat"], saved["duration"]) != (args.repeat, args.duration):
                raise SystemExit(
                    f"--workload {args.workload}: the saved goal ran {saved['repeat']} rounds x {saved['duration']} s; "
                    "measure it again with the same --repeat and --duration, or every workload"
                )
            # This workload's comparison replaces the saved one (or joins them), in the order of the list above.
            merged = saved["comparisons"] | document["comparisons"]
            order = [*EXAMPLES, "stepped-rate"]
            document["comparisons"] = dict(
                sorted(merged.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order))
            )
            document["machine"] = saved["machine"]
    save_result("auto-goal", document, report(document))
    plot(document, RESULTS / "auto-goal.png")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument(
        "--only", choices=["goal", "latency", "mixed", "idle", "timeline", "timeline-layouts"], help="one experiment"
    )
    parser.add_argument("--workload", choices=[*EXAMPLES, "stepped-rate"], help="goal: one workload")
    parser.add_argument(
        "--render", action="store_true", help="goal, latency: only redraw the table (and plot) from the saved result"
    )
    args = parser.parse_args()
    steps = {
        "goal": lambda: goal(args),
        "latency": lambda: latency(args.repeat, args.duration, args.render),
        "mixed": lambda: mixed(args.repeat, args.duration),
        "idle": lambda: idle(args.repeat, args.duration),
        "timeline": lambda: timeline(args.duration),
        "timeline-layouts": lambda: timeline(args.duration, "auto-timeline-layouts"),
    }
    return run_selected(steps, args.only)


if __name__ == "__main__":
    sys.exit(main())
