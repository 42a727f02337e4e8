"""UNiS experiments (UNiS Sec. 5): chain length, heterogeneous and variable-cost chains, several chains on a
shared core, the occupancy ablation over a time-slice sweep, latency at 80 % load, context switches and CPU share,
interface capacity, unmodified testpmd in a chain, the interface monitor's sampling, and when a slice starts.

Usage (as root): .venv/bin/python bench/unis_experiments.py [--repeat 3] [--duration 2] [--only NAME]
Writes bench/results/unis-<name>.json.gz, .md and .png. Every number is a median of --repeat runs, and every
ratio is taken inside one invocation. The UNiS loop runs on the control core, beside the generator and sink.
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

from bench.experiment_support import (  # noqa: E402
    RESULTS,
    chain_mpps,
    exact,
    fastest_entry_cost,
    fmt,
    interleaved_variants,
    mpps,  # noqa: E402
    paired_share,
    ratio,
    read_result,
    run,
    run_selected,
    save_result,
    share_text,
)
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.results.comparison_report import comparison_report  # noqa: E402
from controlplane.results.comparison_rounds import round_ratios, rounds_of  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402
from tandem import Spec, load_spec  # noqa: E402

SCHEDULERS = ["unis", "coop", "rtc", "cfs"]
LIGHT, MEDIUM, HEAVY = 50, 150, 250  # the paper's cycles per packet (Sec. 5.1.2)


def chain_spec(
    name: str,
    chains: dict[str, list[dict]],
    size="64",
    rate="max",
    options: dict | None = None,
    ring_capacity: int = 2048,
) -> Spec:
    """chains: chain name -> list of cost-NF argument dicts, every NF on core 1. 2048 is the paper's interface
    capacity."""
    document = {
        "name": name,
        "ring_capacity": ring_capacity,
        "traffic": {"rate": rate, "size": size if size == "datacenter" else int(size), "flows": 64},
        "scheduler": {"name": "unis", "options": options or {}},
        "scheduler_options": {"coop": {"k": 8}},
        "chains": [
            {
                "name": chain,
                "nfs": [
                    {"name": f"{chain}-{i + 1}", "type": "cost", "core": 1, "args": args} for i, args in enumerate(nfs)
                ],
            }
            for chain, nfs in chains.items()
        ],
    }
    return Spec.model_validate(document)


def save(name: str, document: dict, text: str) -> None:
    save_result(f"unis-{name}", document, text)


def header(what: str, repeat: int, duration: float) -> str:
    return (
        f"{what}\nmedian of {repeat} runs x {duration} s on {machine_description()}; UNiS on the control core; "
        f"unis/coop is the median of the ratios of runs made back to back, leaving out pairs that ran in different "
        f"modes of the VM\n\n"
    )


# 1. Fig. 4: identical light and medium NFs, chain length 1-8, one core.
def chain_length(repeat, duration, lengths):
    summary = {"machine": machine_description(), "lengths": lengths, "light": {}, "medium": {}}
    for label, cycles in (("light", LIGHT), ("medium", MEDIUM)):
        for n in lengths:
            summary[label][n] = run(
                chain_spec(f"{label}-{n}", {"c": [{"cycles": cycles}] * n}), SCHEDULERS, repeat, duration
            )
    render_chain_length(summary)
    return summary


def render_chain_length(summary: dict) -> None:
    """Table, verdicts and plot of Fig. 4 from its runs (also from a saved unis-chain-length.json.gz: --render)."""
    lengths = summary["lengths"]
    for label in ("light", "medium"):  # JSON keeps the lengths as strings
        summary[label] = {int(n): c for n, c in summary[label].items()}
    some_unis = summary["light"][lengths[0]]["schedulers"]["unis"]
    repeat, duration = len(some_unis["runs"]), some_unis["results"][0]["duration_s"]
    rows, verdicts = [], []
    # The same first NF at every length, so the cheapest run of any length tells which runs ran slow.
    fastest_of = {label: fastest_entry_cost(list(summary[label].values())) for label in ("light", "medium")}
    for label in ("light", "medium"):
        fastest = fastest_of[label]
        for n in lengths:
            c = summary[label][n]
            rows.append(
                [label, n]
                + [fmt(mpps(c, s)) for s in SCHEDULERS]
                + [share_text(paired_share(c, "unis", "coop", fastest=fastest)), exact(c)]
            )
    for label, target in (("light", 0.90), ("medium", 0.97)):
        fastest = fastest_of[label]
        shares = [
            share
            for n in lengths
            if n > 1 and (share := paired_share(summary[label][n], "unis", "coop", fastest=fastest)) is not None
        ]
        if shares:
            median = statistics.median(shares)
            verdicts.append(
                f"unis vs coop, {label} NFs, chains of 2-8 (median): {median:.1%} (target >= {target:.0%}: "
                f"{'met' if median >= target else 'missed'})"
            )
        for slow, mode in ((False, "fast mode"), (True, "slow mode")):
            by_mode = {
                n: share
                for n in lengths
                if n > 1
                and (share := paired_share(summary[label][n], "unis", "coop", slow=slow, fastest=fastest)) is not None
            }
            if by_mode:
                verdicts.append(
                    f"    pairs run in the {mode} only: {statistics.median(by_mode.values()):.1%} (median over lengths "
                    f"{', '.join(map(str, by_mode))})"
                )
    if 3 in lengths:
        c = summary["light"][3]
        verdicts.append(
            f"unis vs cfs, 3 light NFs: {mpps(c, 'unis') / mpps(c, 'cfs'):.0f}x (target >= 20x: "
            f"{'met' if mpps(c, 'unis') >= 20 * mpps(c, 'cfs') else 'missed'})"
        )
    text = (
        header(
            "Fig. 4: chains of identical NFs on one core (light 50, medium 150 cycles/packet), 64 B, delivered Mpps",
            repeat,
            duration,
        )
        + table(["NFs", "length"] + SCHEDULERS + ["unis/coop", "accounting"], rows, align_left=1)
        + "\n\n"
        + "\n".join(verdicts)
    )
    save("chain-length", summary, text)
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for axis, label in zip(axes, ("light", "medium"), strict=True):
        for s in SCHEDULERS:
            axis.plot(lengths, [mpps(summary[label][n], s) or float("nan") for n in lengths], marker="o", label=s)
        axis.set_yscale("symlog", linthresh=0.1)
        axis.set_title(f"{label} NFs ({LIGHT if label == 'light' else MEDIUM} cycles/packet)")
        axis.set_xlabel("NFs in the chain (one core)")
        axis.set_ylabel("delivered Mpps (median, symlog)")
        axis.legend()
    figure.suptitle(machine_description(), fontsize=9)
    figure.tight_layout()
    figure.savefig(RESULTS / "unis-chain-length.png", dpi=110)


# 2. Fig. 7 (alternating medium/heavy) and Fig. 8 (variable cost under the data-centre size mix).
def heterogeneous(repeat, duration):
    alternating = [{"cycles": MEDIUM if i % 2 == 0 else HEAVY} for i in range(4)]
    variable = [{"cycles": 40, "cycles_per_byte": 0.25}] * 4  # ~90 cycles at 200 B, ~390 at 1400 B
    cases = {
        "alternating medium/heavy, 4 NFs, 64 B (Fig. 7)": run(
            chain_spec("alternating", {"c": alternating}), SCHEDULERS, repeat, duration
        ),
        "variable cost, 4 NFs, data-centre mix (Fig. 8)": run(
            chain_spec("variable", {"c": variable}, size="datacenter"), SCHEDULERS, repeat, duration
        ),
    }
    rows = [
        [name] + [fmt(mpps(c, s)) for s in SCHEDULERS] + [share_text(paired_share(c, "unis", "coop")), exact(c)]
        for name, c in cases.items()
    ]
    text = header(
        "Fig. 7-8: heterogeneous and variable-cost chains on one core, delivered Mpps", repeat, duration
    ) + table(["chain"] + SCHEDULERS + ["unis/coop", "accounting"], rows)
    save("heterogeneous", cases, text)
    bars(cases, "unis-heterogeneous.png", "delivered Mpps (median)")


# 3. Table 1, scaled to our one NF core.
def multiple_chains(repeat, duration):
    m = {"cycles": MEDIUM}
    configs = {
        "(a) S1=3, S2=1 on one core (as the paper)": {"S1": [m] * 3, "S2": [m]},
        "(b) S1=2, S2=2 on one core (paper: 4+4 over two cores)": {"S1": [m] * 2, "S2": [m] * 2},
        "(c) S1=4 on one core (paper: 8 over two cores)": {"S1": [m] * 4},
    }
    results, rows = {}, []
    for label, chains in configs.items():
        c = run(chain_spec("table1", chains), ["unis", "coop"], repeat, duration)
        results[label] = c
        for s in ("unis", "coop"):
            per_chain = {chain: chain_mpps(c, s, chain) for chain in chains}
            values = [v for v in per_chain.values() if v is not None]
            starving = "no" if values and min(values) > 0.5 * max(values) else "YES"
            rows.append([label, s, "  ".join(f"{k}={fmt(v)}" for k, v in per_chain.items()), starving])
    text = header(
        "Table 1: several chains of medium NFs sharing core 1 (our machines have one NF core), "
        "delivered Mpps per chain",
        repeat,
        duration,
    ) + table(["configuration", "scheduler", "per chain", "a chain starves"], rows, align_left=3)
    save("multiple-chains", results, text)


# 4. Fig. 15: the occupancy optimisation on and off while the slice sweeps 25-125 % of the egress capacity.
def occupancy(repeat, duration):
    fractions = [0.25, 0.5, 0.75, 1.0, 1.25]
    sweep = {"on": {}, "off": {}}
    for switch in ("on", "off"):
        for f in fractions:
            spec = chain_spec(
                f"occupancy-{switch}-{f}",
                {"c": [{"cycles": MEDIUM}] * 3},
                options={"slice_fraction": f, "occupancy": switch == "on"},
            )
            sweep[switch][f] = run(spec, ["unis"], repeat, duration)
    rows = [
        [f"{f:.0%}"]
        + [fmt(mpps(sweep[s][f], "unis")) for s in ("on", "off")]
        + [ratio(mpps(sweep["off"][f], "unis"), mpps(sweep["on"][f], "unis"))]
        for f in fractions
    ]
    text = header(
        "Fig. 15: 3 medium NFs, unis time slice = cost x fraction x capacity(egress), occupancy rules on/off, "
        "delivered Mpps",
        repeat,
        duration,
    ) + table(["slice fraction", "occupancy on", "occupancy off", "off/on"], rows)
    save("occupancy", sweep, text)
    figure, axis = plt.subplots(figsize=(6.5, 4))
    for s in ("on", "off"):
        axis.plot(
            [f * 100 for f in fractions],
            [mpps(sweep[s][f], "unis") or float("nan") for f in fractions],
            marker="o",
            label=f"occupancy {s}",
        )
    axis.set_xlabel("time slice, % of egress capacity x cost")
    axis.set_ylabel("delivered Mpps (median)")
    axis.set_ylim(bottom=0)
    axis.set_title(f"UNiS occupancy optimisation (3 medium NFs)\n{machine_description()}", fontsize=9)
    axis.legend()
    figure.tight_layout()
    figure.savefig(RESULTS / "unis-occupancy.png", dpi=110)


# 5. Fig. 5: latency at 80 % of the maximum sustainable rate, 128 B; 6. Figs. 10-11 from the same chains at full load.
def latency_and_switches(repeat, duration):
    cases, rows, switch_rows = {}, [], []
    for label, cycles in (("light", LIGHT), ("medium", MEDIUM)):
        full = run(
            chain_spec(f"{label}-3-max", {"c": [{"cycles": cycles}] * 3}, size="128"),
            ["unis", "coop"],
            repeat,
            duration,
        )
        sustainable = min(mpps(full, "unis"), mpps(full, "coop"))
        rate = f"{0.8 * sustainable:.3f} Mpps"
        loaded = run(
            chain_spec(f"{label}-3-80pct", {"c": [{"cycles": cycles}] * 3}, size="128", rate=rate),
            ["unis", "coop"],
            repeat,
            duration,
        )
        cases[label] = {"full": full, "at_80_percent": loaded, "rate": rate}
        for s in ("unis", "coop"):
            lat = [r["chains"][0]["latency_us"] for r in loaded["schedulers"][s]["results"]]
            rows.append(
                [label, rate, s]
                + [fmt(statistics.median(percentiles[p] for percentiles in lat), 1) for p in ("p5", "p50", "p95")]
            )
            per_nf = [r["nfs"] for r in full["schedulers"][s]["results"]]
            switches = statistics.median(
                sum(
                    nf["os"].get("voluntary_switches_per_s", 0) + nf["os"].get("involuntary_switches_per_s", 0)
                    for nf in nfs
                )
                / len(nfs)
                for nfs in per_nf
            )
            slowest = statistics.median(min(nf["os"].get("cpu_share", 0) for nf in nfs) for nfs in per_nf)
            switch_rows.append([label, s, fmt(mpps(full, s)), f"{switches:,.0f}", f"{slowest:.1%}"])
    text = (
        header(
            "Fig. 5: 3-NF chains, 128 B, offered 80 % of the lower maximum of unis and coop: latency in microseconds",
            repeat,
            duration,
        )
        + table(["NFs", "offered", "scheduler", "p5", "p50", "p95"], rows, align_left=3)
        + "\n\nFigs. 10-11: the same chains at full load: context switches per NF per second, "
        "CPU share of the slowest NF\n\n"
        + table(["NFs", "scheduler", "Mpps", "cs/s per NF", "slowest NF CPU"], switch_rows, align_left=2)
    )
    save("latency", cases, text)
    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for axis, label in zip(axes, ("light", "medium"), strict=True):
        for offset, s in enumerate(("unis", "coop")):
            lat = [r["chains"][0]["latency_us"] for r in cases[label]["at_80_percent"]["schedulers"][s]["results"]]
            values = [statistics.median(percentiles[p] for percentiles in lat) for p in ("p5", "p50", "p95")]
            axis.bar([i + offset * 0.4 for i in range(3)], values, width=0.4, label=s)
        axis.set_xticks([0.2, 1.2, 2.2], ["p5", "p50", "p95"])
        axis.set_ylabel("latency, us")
        axis.set_title(f"3 {label} NFs at {cases[label]['rate']}")
        axis.legend()
    figure.suptitle(machine_description(), fontsize=9)
    figure.tight_layout()
    figure.savefig(RESULTS / "unis-latency.png", dpi=110)


# Low load (issue 37): a packet that finds no NF's input above theta_min once waited for arrivals that might never
# come (12 ms p50 at 1 kpps through eight light NFs). An NF whose input has stayed empty for idle_handover_us now
# hands the core to any NF with a packet (wait_queue.cc). Its cost under load is what the handover time is for:
# measured here against never (the paper) and at once, with coop and rtc beside them, at 1 kpps and at full load.
IDLE_HANDOVER = {-1: "unis, never (paper)", 0: "unis, at once", 20: "unis, after 20 us (default)"}


def low_load(repeat, duration):
    cases = {}
    for nfs, rate in ((8, "1 kpps"), (3, "max"), (8, "max")):
        chain = {"c": [{"cycles": LIGHT}] * nfs}
        name = f"light-{nfs}-{rate.replace(' ', '')}"
        specs = {
            label: (chain_spec(f"{name}-{value}", chain, rate=rate, options={"idle_handover_us": value}), "unis")
            for value, label in IDLE_HANDOVER.items()
        }
        for scheduler in ("coop", "rtc"):
            specs[scheduler] = (chain_spec(f"{name}-{scheduler}", chain, rate=rate), scheduler)
        cases[f"{nfs} light NFs, {rate}"] = interleaved_variants(specs, repeat, duration)
    rows = []
    for case, comparison in cases.items():
        for variant, entry in comparison["schedulers"].items():
            median = entry["median"] or {}
            switches = median.get("context_switches_per_s")
            delivered = sum(r["chains"][0]["delivered"] for r in entry["results"])
            offered = sum(r["chains"][0]["generated"] for r in entry["results"])
            rows.append(
                [case, variant, fmt(median.get("delivered_mpps")), fmt(median.get("p50_us"), 1)]
                + [fmt(median.get("p99_us"), 1), "n/a" if switches is None else f"{switches:,.0f}"]
                + [f"{delivered:,} of {offered:,}"]
            )
    text = header(
        "Low load: light NFs (50 cycles) chained on one core, 64 B, at 1 kpps and at full load, under unis with its "
        "idle handover never, at once and after 20 us, and coop and rtc: latency in microseconds",
        repeat,
        duration,
    ) + table(["case", "scheduler", "Mpps", "p50", "p99", "cs/s", "delivered of offered"], rows, align_left=2)
    save("low-load", cases, text)


# Issue 37's finding: examples/light-chain.yaml as a user compares it, and what compare says of the VM's modes.
def light_chain_compare(repeat, duration):
    spec = load_spec(HERE.parent / "examples" / "light-chain.yaml")
    comparison = run(spec, ["cfs", "coop", "unis", "rtc"], repeat, duration)
    coop_runs, unis_runs = (comparison["schedulers"][name]["runs"] for name in ("coop", "unis"))
    coop = {round_: run_["delivered_mpps"] for round_, run_ in zip(rounds_of(coop_runs), coop_runs, strict=True)}
    ratios = [ratio for ratio in round_ratios(unis_runs, coop) if ratio is not None]
    median = statistics.median(ratios) if ratios else None
    verdict = (
        "unis / coop, round by round: "
        + ", ".join(f"{r:.2f}" for r in ratios)
        + ("; median n/a" if median is None else f"; median {median:.2f} (UNiS's promise >= 0.90: ")
        + ("" if median is None else ("met)" if median >= 0.9 else "missed)"))
    )
    save("light-chain-compare", comparison, comparison_report(comparison) + "\n\n" + verdict)


# 7. The non-intrusive claim: unmodified dpdk-testpmd processes as links of a chain, under unis and the kernel.
def external(repeat, duration):
    def mixed(name: str, middle: list[dict]) -> Spec:
        return Spec.model_validate(
            {
                "name": name,
                "traffic": {"rate": "max", "size": 64, "flows": 64},
                "scheduler": {"name": "unis"},
                "scheduler_options": {"coop": {"k": 8}},
                "chains": [
                    {
                        "name": "c",
                        "nfs": [
                            {"name": "fw", "type": "firewall", "core": 1, "args": {"synthetic_rules": 10}},
                            *middle,
                            {"name": "ttl", "type": "ttl", "core": 1},
                        ],
                    }
                ],
            }
        )

    testpmd = [
        {"name": "pmd1", "type": "external", "core": 1, "args": {"forward_mode": "io"}},
        {"name": "pmd2", "type": "external", "core": 1, "args": {"forward_mode": "macswap"}},
    ]
    tandem_nfs = [{"name": "mac1", "type": "macswap", "core": 1}, {"name": "mac2", "type": "macswap", "core": 1}]
    with_testpmd = run(mixed("with-testpmd", testpmd), ["unis", "rr", "cfs"], repeat, duration)
    reference = run(mixed("with-tandem-macswap", tandem_nfs), ["unis", "coop", "cfs"], repeat, duration)
    rows = [["fw > testpmd io > testpmd macswap > ttl", s, fmt(mpps(with_testpmd, s))] for s in ("unis", "rr", "cfs")]
    rows += [["fw > macswap > macswap > ttl (Tandem NFs)", s, fmt(mpps(reference, s))] for s in ("unis", "coop", "cfs")]
    unis, cfs = mpps(with_testpmd, "unis"), mpps(with_testpmd, "cfs")
    rows.append(["unis / cfs with testpmd", "", f"{unis / cfs:.0f}x" if unis and cfs else "n/a"])
    rows.append(
        ["unis with testpmd / unis with Tandem NFs", "", ratio(mpps(with_testpmd, "unis"), mpps(reference, "unis"))]
    )
    text = header(
        "Unmodified dpdk-testpmd (Debian 22.11) as chain links on core 1, delivered Mpps; coop cannot run them "
        "(it needs the NF to yield)",
        repeat,
        duration,
    ) + table(["chain", "scheduler", "Mpps"], rows, align_left=2)
    text += f"\naccounting: testpmd chain {exact(with_testpmd)}, Tandem chain {exact(reference)}"
    save("external", {"with_testpmd": with_testpmd, "with_tandem_nfs": reference}, text)


# 8. Why unis trails coop here: a switch's fixed cost, paid once per slice, against the packets a slice carries.
# A slice fills at most theta_max = gamma x capacity of the egress, so the interface capacity sets how far a
# switch is amortised; coop's k = 8 batches per turn do not depend on it.
def interface_capacity(repeat, duration):
    capacities, lengths = [2048, 4096, 8192], [3, 6]
    sweep = {label: {n: {} for n in lengths} for label in ("light", "medium")}
    for label, cycles in (("light", LIGHT), ("medium", MEDIUM)):
        for n in lengths:
            for capacity in capacities:
                spec = chain_spec(
                    f"{label}-{n}-ring{capacity}", {"c": [{"cycles": cycles}] * n}, ring_capacity=capacity
                )
                sweep[label][n][capacity] = run(spec, ["unis", "coop"], repeat, duration)

    def switch_figures(comparison: dict) -> tuple[str, str]:
        results = comparison["schedulers"]["unis"]["results"]
        per_s = [r["scheduler"]["report"]["switches"] / (r["duration_s"] + r["warmup_s"]) for r in results]
        call = [us for r in results if (us := r["scheduler"]["report"]["controller_us_per_switch"])]
        return f"{statistics.median(per_s):,.0f}" if per_s else "n/a", fmt(
            statistics.median(call), 1
        ) if call else "n/a"

    rows, verdicts = [], []
    for label in ("light", "medium"):
        for n in lengths:
            for capacity in capacities:
                c = sweep[label][n][capacity]
                per_s, call = switch_figures(c)
                rows.append(
                    [
                        label,
                        n,
                        capacity,
                        fmt(mpps(c, "unis")),
                        fmt(mpps(c, "coop")),
                        share_text(paired_share(c, "unis", "coop")),
                        per_s,
                        call,
                        exact(c),
                    ]
                )
    for label, target in (("light", 0.90), ("medium", 0.97)):
        for capacity in capacities:
            shares = [
                share for n in lengths if (share := paired_share(sweep[label][n][capacity], "unis", "coop")) is not None
            ]
            if shares:
                median = statistics.median(shares)
                verdicts.append(
                    f"unis vs coop, {label} NFs, interfaces of {capacity} (median over {lengths}): {median:.0%} "
                    f"(target >= {target:.0%}: {'met' if median >= target else 'missed'})"
                )
    text = header(
        "Interface capacity: unis vs coop (k = 8) as the rings between NFs grow; a unis slice fills at most "
        "gamma x capacity, so each switch carries more packets. Delivered Mpps; switches/s and the process "
        "controller's time per switch (on the control core) from the unis runs",
        repeat,
        duration,
    )
    text += table(
        ["NFs", "length", "capacity", "unis", "coop", "unis/coop", "switches/s", "us/switch", "accounting"],
        rows,
        align_left=1,
    )
    text += "\n\n" + "\n".join(verdicts)
    save("capacity", sweep, text)
    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for axis, label in zip(axes, ("light", "medium"), strict=True):
        for n in lengths:
            shares = [100 * (paired_share(sweep[label][n][cap], "unis", "coop") or float("nan")) for cap in capacities]
            axis.plot(capacities, shares, marker="o", label=f"{n} NFs")
        axis.axhline(90 if label == "light" else 97, color="grey", linestyle="--", label="target")
        axis.set_xscale("log", base=2)
        axis.set_xticks(capacities, [str(c) for c in capacities])
        axis.set_xlabel("interface (ring) capacity, packets")
        axis.set_ylabel("unis / coop throughput, %")
        axis.set_title(f"{label} NFs ({LIGHT if label == 'light' else MEDIUM} cycles/packet), one core")
        axis.legend()
    figure.suptitle(machine_description(), fontsize=9)
    figure.tight_layout()
    figure.savefig(RESULTS / "unis-capacity.png", dpi=110)


# Monitoring: the paper's every-ring-every-T sampling against the predicted sampling (the default).
def unis_variants_beside_coop(
    name: str, nfs: dict, option: str, variants: dict[str, str], repeat: int, duration: float
) -> dict:
    """unis with each value of one option (value -> label) and coop on the same chain, interleaved run by run."""
    specs = {
        label: (chain_spec(f"{name}-{value}", nfs, options={option: value}), "unis")
        for value, label in variants.items()
    }
    specs["coop"] = (chain_spec(f"{name}-coop", nfs), "coop")
    return interleaved_variants(specs, repeat, duration)


def sampling(repeat, duration):
    cases = {"light, 3 NFs": (LIGHT, 3), "medium, 3 NFs": (MEDIUM, 3), "medium, 6 NFs": (MEDIUM, 6)}
    variants = {"predicted": "unis (predicted)", "every_interval": "unis (every T)"}
    document, rows = {}, []
    for case, (cycles, n) in cases.items():
        nfs = {"c": [{"cycles": cycles}] * n}
        c = document[case] = unis_variants_beside_coop(
            f"sampling-{cycles}-{n}", nfs, "sampling", variants, repeat, duration
        )

        def inner_cost(name, c=c):  # the NFs whose both rings only UNiS's monitor reads from the control core
            costs = [
                statistics.mean(nf["window"]["cycles_per_packet"] for nf in r["nfs"][1:-1])
                for r in c["schedulers"][name]["results"]
            ]
            return fmt(statistics.median(costs), 0)

        def reads_per_s(name, c=c):
            results = c["schedulers"][name]["results"]
            per_s = [r["scheduler"]["report"]["ring_reads"] / (r["duration_s"] + r["warmup_s"]) for r in results]
            return f"{statistics.median(per_s):,.0f}"

        for label in list(variants.values()) + ["coop"]:
            unis = label != "coop"
            rows.append(
                [
                    case,
                    label,
                    fmt(mpps(c, label)),
                    share_text(paired_share(c, label, "coop")) if unis else "",
                    share_text(paired_share(c, label, "coop", slow=False)) if unis else "",
                    share_text(paired_share(c, label, "coop", slow=True)) if unis else "",
                    inner_cost(label),
                    reads_per_s(label) if unis else "",
                    exact({"schedulers": {label: c["schedulers"][label]}}),
                ]
            )
    text = header(
        "UNiS's interface monitor: every ring read every T = 1 us (the paper) or the running NF's rings read when it "
        "could first reach a threshold (predicted, the default); inner NFs' cycles/packet are those of the NFs "
        "between the first and the last, whose rings only the monitor reads from the control core",
        repeat,
        duration,
    )
    text += table(
        [
            "chain",
            "scheduler",
            "Mpps",
            "vs coop",
            "fast pairs",
            "slow pairs",
            "inner cyc/pkt",
            "ring reads/s",
            "accounting",
        ],
        rows,
        align_left=2,
    )
    save("sampling", document, text)


# When a turn's slice starts: when UNiS decides (the paper) or when the NF is first seen moving its rings.
def slice_start(repeat, duration):
    cases = {
        "light, 3 NFs": [LIGHT] * 3,
        "light, 6 NFs": [LIGHT] * 6,
        "medium, 3 NFs": [MEDIUM] * 3,
        "medium/heavy, 4 NFs (Fig. 7)": [MEDIUM, HEAVY, MEDIUM, HEAVY],
    }
    variants = {"progress": "unis (from progress)", "decision": "unis (from decision)"}
    document, rows = {}, []
    for number, (case, costs) in enumerate(cases.items()):
        nfs = {"c": [{"cycles": cycles} for cycles in costs]}
        c = document[case] = unis_variants_beside_coop(
            f"slice-{number}", nfs, "slice_start", variants, repeat, duration
        )

        def turns_on_the_clock(name, c=c):  # the share of turns that ended because the slice expired
            shares = []
            for r in c["schedulers"][name]["results"]:
                ended = [nf["yielded"] for nf in r["scheduler"]["report"]["nfs"].values()]
                total = sum(sum(e.values()) for e in ended)
                shares.append(sum(e["slice_expired"] for e in ended) / total if total else 0)
            return share_text(statistics.median(shares))

        for label in list(variants.values()) + ["coop"]:
            unis = label != "coop"
            rows.append(
                [
                    case,
                    label,
                    fmt(mpps(c, label)),
                    share_text(paired_share(c, label, "coop")) if unis else "",
                    share_text(paired_share(c, label, "unis (from decision)"))
                    if label == "unis (from progress)"
                    else "",
                    turns_on_the_clock(label) if unis else "",
                    exact({"schedulers": {label: c["schedulers"][label]}}),
                ]
            )
    text = header(
        "UNiS time slices that start when UNiS decides (the paper) or when the NF is first seen moving its rings "
        "(the default): a switch reaches the NF's core 10-14 us after the decision on this guest",
        repeat,
        duration,
    )
    text += table(
        ["chain", "scheduler", "Mpps", "vs coop", "vs from decision", "turns ended by the slice", "accounting"],
        rows,
        align_left=2,
    )
    save("slice-start", document, text)


def bars(cases: dict, filename: str, ylabel: str) -> None:
    figure, axis = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(SCHEDULERS)
    for k, s in enumerate(SCHEDULERS):
        axis.bar(
            [i + k * width for i in range(len(cases))], [mpps(c, s) or 0 for c in cases.values()], width=width, label=s
        )
    axis.set_xticks(
        [i + 0.4 - width / 2 for i in range(len(cases))], [name.split(" (")[0] for name in cases], fontsize=8
    )
    axis.set_ylabel(ylabel)
    axis.set_title(machine_description(), fontsize=9)
    axis.legend()
    figure.tight_layout()
    figure.savefig(RESULTS / filename, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--lengths", default="1,2,3,4,6,8")
    parser.add_argument(
        "--render",
        action="store_true",
        help="with --only chain-length: table, verdicts and plot again from the saved runs, without running",
    )
    parser.add_argument(
        "--only",
        choices=[
            "chain-length",
            "heterogeneous",
            "multiple-chains",
            "occupancy",
            "latency",
            "external",
            "capacity",
            "sampling",
            "slice-start",
            "low-load",
            "light-chain-compare",
        ],
    )
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    steps = {
        "chain-length": lambda: chain_length(args.repeat, args.duration, [int(x) for x in args.lengths.split(",")]),
        "heterogeneous": lambda: heterogeneous(args.repeat, args.duration),
        "multiple-chains": lambda: multiple_chains(args.repeat, args.duration),
        "occupancy": lambda: occupancy(args.repeat, args.duration),
        "latency": lambda: latency_and_switches(args.repeat, args.duration),
        "external": lambda: external(args.repeat, args.duration),
        "capacity": lambda: interface_capacity(args.repeat, args.duration),
        "sampling": lambda: sampling(args.repeat, args.duration),
        "slice-start": lambda: slice_start(args.repeat, args.duration),
        "low-load": lambda: low_load(args.repeat, args.duration),
        "light-chain-compare": lambda: light_chain_compare(args.repeat, args.duration),
    }
    if args.render:
        if args.only != "chain-length":
            parser.error("--render needs --only chain-length")
        render_chain_length(read_result("unis-chain-length"))
        return 0
    return run_selected(steps, args.only)


if __name__ == "__main__":
    sys.exit(main())
