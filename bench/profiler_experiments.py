"""Profiler experiments (issue 20): where each packet's time goes on the three-firewall chain and the light chain
under every scheduler (run --profile), what the profiler itself costs in throughput, and SCC's Table 4 for
kernel-I/O chains.

Usage (as root): .venv/bin/python bench/profiler_experiments.py [--repeat 3] [--duration 2]
    [--only breakdown|cost|kernel]
Writes bench/results/profiler-<name>.json.gz, .md (and .png for the breakdowns), through the Python API.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import tandem  # noqa: E402
from bench.experiment_support import RESULTS, exact, fmt, save_result  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.results.explain import breakdown_bars, chain_parts, explain  # noqa: E402
from controlplane.results.plot import plot_breakdown  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

SCHEDULERS = ["cfs", "batch", "rr", "fifo", "coop", "rtc", "unis", "nfvnice", "bubble"]
CHAINS = {
    "three-firewalls": HERE.parent / "examples" / "three-firewalls.yaml",
    "light-chain": HERE.parent / "examples" / "light-chain.yaml",
}
# What each part of a breakdown is summed into for the table: the kinds of time, over every NF.
KINDS = ("behind other work", "NF not running", "split unknown", "in NF", "sink")


def kind_totals(parts: dict[str, float]) -> dict[str, float]:
    return {kind: sum(us for name, us in parts.items() if kind in name) for kind in KINDS}


def breakdowns(repeat: int, duration: float) -> None:
    for name, path in CHAINS.items():
        comparison = tandem.compare(path, SCHEDULERS, repeat, duration, profile=True, ceiling=False).as_json()
        rows = []
        for scheduler, entry in comparison["schedulers"].items():
            results = entry["results"]
            parts, total, traced = (
                chain_parts(results, tandem.load_spec(path).chains[0].name) if results else ({}, 0.0, 0)
            )
            kinds = kind_totals(parts)
            rows.append(
                [scheduler, fmt((entry["median"] or {}).get("delivered_mpps"), 2), fmt(total if traced else None, 1)]
                + [fmt(kinds[k], 1) if traced else "failed" for k in KINDS]
                + [f"{traced:,}"]
            )
        text = (
            f"{name}: where a packet's time goes, µs per packet "
            f"(mean over traced packets of {repeat} x {duration} s per "
            f"scheduler; {exact(comparison)})\n{machine_description()}\n\n"
            + table(["scheduler", "Mpps", "end to end", *[f"{k}" for k in KINDS], "traced"], rows)
            + "\n\n"
            + explain(comparison, name)
        )
        save_result(f"profiler-{name}", comparison, text)
        plot_breakdown(
            breakdown_bars(comparison, name),
            f"{name}: where each packet's time went\n{machine_description()}",
            str(RESULTS / f"profiler-{name}.png"),
        )


def profiler_cost(repeat: int, duration: float) -> None:
    """Throughput without --profile, with its per-hop tracing alone, and with all of it (the tracing and each NF
    process's perf counters), the three alternated run by run (rtc, coop and unis: the tracing's work is per batch in
    every NF and per traced packet in the sink, on the control core; the counters' system-call tracepoint is paid on
    every call an NF makes, and a yielding NF makes hundreds of thousands a second)."""
    variants = {"without": False, "tracing": "hops", "full": True}
    rows, document = [], {}
    for scheduler in ("rtc", "coop", "unis"):
        runs: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(repeat):
            outcomes = {
                name: tandem.run(CHAINS["three-firewalls"], scheduler, duration, profile=profile)
                for name, profile in variants.items()
            }
            if all(o.ok for o in outcomes.values()):
                for name, outcome in outcomes.items():
                    runs[name].append(outcome.results.delivered_mpps)
        ratios = {
            name: [w / wo for w, wo in zip(runs[name], runs["without"], strict=True)] for name in ("tracing", "full")
        }
        document[scheduler] = {"mpps": runs, "ratios": ratios}
        rows.append(
            [
                scheduler,
                *[fmt(statistics.median(runs[n]) if runs[n] else None, 2) for n in variants],
                *[fmt(statistics.median(ratios[n]) if ratios[n] else None, 3) for n in ("tracing", "full")],
            ]
        )
    text = (
        "Profiler cost: three-firewalls delivered Mpps without --profile, with its per-hop tracing alone "
        "(one packet in "
        f"512), and with all of it (tracing and perf counters), {repeat} alternated triples of {duration} s\n"
        f"{machine_description()}\n\n"
        + table(["scheduler", "without", "tracing", "full", "tracing/without (median)", "full/without (median)"], rows)
    )
    save_result("profiler-cost", document, text)


def kernel_table4(repeat: int, duration: float) -> None:
    """SCC's Table 4 for kernel-I/O chains: per router, the CPU time's kernel share, system calls and context switches
    a packet, and the share of its CPU time a packet that Table 3's terms leave unexplained (with `./tandem
    primitives` cached), for one and three routers, one frame or 32 per system call, under cfs and scc."""
    from controlplane.machine.primitive_latencies import cached, memory_latency_ns
    from controlplane.results.explain import kernel_io_nfs
    from controlplane.results.time_explained import explain_process, memory_levels, switch_policy

    primitives = cached()
    memory = memory_levels(lambda size, stride: memory_latency_ns(primitives, size, stride)) if primitives else {}
    rows, document = [], {}
    for length in (1, 3):
        for mux in (1, 32):
            for scheduler in ("cfs", "scc"):
                spec = {
                    "name": f"routers-{length}",
                    "duration": duration,
                    "warmup": 0.5,
                    "traffic": {"size": 64, "flows": 16, "rate": 20000},
                    "chains": [
                        {
                            "name": "routers",
                            "io": "kernel",
                            "mux": mux,
                            "nfs": [{"name": f"r{k + 1}", "type": "ttl", "core": 1} for k in range(length)],
                        }
                    ],
                }
                for r in range(repeat):
                    outcome = tandem.run(spec, scheduler, duration, profile=True)
                    if not outcome.ok:
                        continue
                    results = outcome.results.as_json()
                    document.setdefault(f"{length} x mux {mux} {scheduler}", []).append(results)
                    if r:
                        continue  # one row per case: the first run's (the JSON keeps every run)
                    probe = results["profile"]["perf_counters"]
                    for worker in probe["workers"]:
                        nf = next(n for n in results["nfs"] if n["name"] == worker["worker"])
                        os_counters = nf["os"]
                        user, system = os_counters.get("user_share"), os_counters.get("system_share")
                        counters = worker["counters"]
                        explained = (
                            explain_process(
                                counters,
                                primitives["results"],
                                switch_policy(results["scheduler"]),
                                worker["worker"] in kernel_io_nfs(results),
                                memory,
                            )
                            if primitives
                            else None
                        )
                        rows.append(
                            [
                                f"{length}",
                                f"{mux}",
                                scheduler,
                                worker["worker"],
                                fmt(
                                    system / (user + system) * 100
                                    if user is not None and system is not None and user + system > 0
                                    else None,
                                    0,
                                ),
                                fmt(counters["syscalls"]["per_packet"], 3) if "syscalls" in counters else "n/a",
                                fmt(counters["context_switches"]["per_packet"], 3),
                                fmt(counters["task_clock_ns"]["per_packet"], 0),
                                "n/a"
                                if not explained or explained["unexplained_share"] is None
                                else f"{explained['unexplained_share']:.0%}",
                            ]
                        )
    text = (
        "SCC Table 4 for kernel-I/O chains of ttl routers at 20 kpps (run --profile; "
        f"first of {repeat} runs of {duration} s "
        f"per case)\n{machine_description()}\n\n"
        + table(
            [
                "routers",
                "mux",
                "scheduler",
                "NF",
                "kernel % of CPU",
                "syscalls/pkt",
                "switches/pkt",
                "CPU ns/pkt",
                "unexplained (Table 3)",
            ],
            rows,
        )
    )
    save_result("profiler-kernel-table4", document, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--only", choices=["breakdown", "cost", "kernel"])
    args = parser.parse_args()
    if args.only in (None, "breakdown"):
        breakdowns(args.repeat, args.duration)
    if args.only in (None, "cost"):
        profiler_cost(args.repeat, args.duration)
    if args.only in (None, "kernel"):
        kernel_table4(args.repeat, args.duration)
    return 0


if __name__ == "__main__":
    sys.exit(main())
