"""μNF experiments (the paper's Figs. 8 and 9) on Tandem's graphs: a line of four μNFs against a two-way parallel
group after the first (Fig. 8), and latency against path length 4-6 (Fig. 9), each at per-μNF costs 100-700 cycles.

Usage (as root): .venv/bin/python bench/micronf_experiments.py [--repeat 3] [--duration 1] [--rate 100] [--cores 1,2]
                 [--only fig8|fig9]
Writes bench/results/micronf-<fig>.json and .md. Every number is a median over --repeat runs of the run's own
latency summary (every 16th packet sampled at the sink), runs interleaved. The μNFs are `cost` NFs run under rtc
(no scheduler between them). With one NF core (our 2 vCPU VM) the branches share it and cannot overlap; with
--cores listing two or more, the parallel group's branches go on separate cores where the machine has them.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.experiment_support import RESULTS, exact, interleaved_variants, save_result  # noqa: E402
from controlplane.report import machine_description, table  # noqa: E402
from controlplane.spec import Spec  # noqa: E402

COSTS = [100, 300, 500, 700]  # cycles per packet of each μNF (the paper's range)


def node(name: str, cycles: int, core: int) -> dict:
    return {"name": name, "type": "cost", "core": core, "args": {"cycles": cycles}}


def spec(name: str, nodes: list[dict], edges: list[tuple[str, str]] | None, rate_kpps: float) -> Spec:
    chain = {"name": "c", "graph": {"nodes": nodes, "edges": [{"from": a, "to": b} for a, b in edges]}} if edges else {"name": "c", "nfs": nodes}
    return Spec.model_validate({"name": name, "warmup": 0.3, "traffic": {"rate": f"{rate_kpps} kpps", "size": 64, "flows": 64},
                                "scheduler": "rtc", "chains": [chain]})


def latency(comparison: dict, variant: str, key: str) -> float | None:
    values = [r["chains"][0]["latency_us"].get(key) for r in comparison["schedulers"][variant]["results"]]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value: float | None) -> str:
    return "failed" if value is None else f"{value:.2f}"


def fig8(repeat: int, duration: float, rate: float, cores: list[int]) -> None:
    """A line n1 -> n2 -> n3 -> n4 against n1 forking to n2 and n3, which re-join at n4 (two branches)."""
    branch_cores = (cores * 2)[1:3] if len(cores) > 1 else [cores[0], cores[0]]
    variants = {}
    for cycles in COSTS:
        line = [node(f"n{i}", cycles, cores[0]) for i in range(1, 5)]
        parallel = [node("n1", cycles, cores[0]), node("n2", cycles, branch_cores[0]), node("n3", cycles, branch_cores[1]),
                    node("n4", cycles, cores[0])]
        variants[f"line-{cycles}"] = (spec(f"fig8-line-{cycles}", line, None, rate), "rtc")
        variants[f"parallel-{cycles}"] = (spec(f"fig8-parallel-{cycles}", parallel, [("n1", "n2"), ("n1", "n3"), ("n2", "n4"),
                                                                                     ("n3", "n4")], rate), "rtc")
    comparison = interleaved_variants(variants, repeat, duration)
    rows = []
    for cycles in COSTS:
        row = [str(cycles)]
        for shape in ("line", "parallel"):
            name = f"{shape}-{cycles}"
            row += [fmt(latency(comparison, name, "mean")), fmt(latency(comparison, name, "p50")),
                    f"{fmt(latency(comparison, name, 'p5'))}-{fmt(latency(comparison, name, 'p95'))}"]
        rows.append(row)
    text = (f"Fig. 8: a line of four μNFs vs a two-way parallel group after the first, rtc, {rate} kpps of 64 B, NF cores {cores} "
            f"(branches on {branch_cores}); latency in us, median of {repeat} runs of {duration} s ({machine_description()})\n\n"
            + table(["cycles/μNF", "line mean", "line p50", "line p5-p95", "parallel mean", "parallel p50", "parallel p5-p95"], rows, align_left=1)
            + f"\n\n{exact(comparison)}")
    save_result("micronf-fig8", comparison, text)


def fig9(repeat: int, duration: float, rate: float, cores: list[int]) -> None:
    """Lines of 4, 5 and 6 μNFs on one core."""
    lengths = [4, 5, 6]
    variants = {f"{length}-{cycles}": (spec(f"fig9-{length}-{cycles}", [node(f"n{i}", cycles, cores[0]) for i in range(1, length + 1)],
                                            None, rate), "rtc")
                for cycles in COSTS for length in lengths}
    comparison = interleaved_variants(variants, repeat, duration)
    rows = [[str(cycles)] + [f"{fmt(latency(comparison, f'{length}-{cycles}', 'mean'))} / {fmt(latency(comparison, f'{length}-{cycles}', 'p50'))}"
                             for length in lengths] for cycles in COSTS]
    text = (f"Fig. 9: latency (mean / p50, us) against path length, lines of cost μNFs under rtc on core {cores[0]}, {rate} kpps of 64 B; "
            f"median of {repeat} runs of {duration} s ({machine_description()})\n\n"
            + table(["cycles/μNF"] + [f"{length} μNFs" for length in lengths], rows, align_left=1) + f"\n\n{exact(comparison)}")
    save_result("micronf-fig9", comparison, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument("--rate", type=float, default=100.0, help="offered kpps: far below what the longest chain processes")
    parser.add_argument("--cores", default="1", help="NF cores, comma-separated; the first runs the line")
    parser.add_argument("--only", choices=["fig8", "fig9"])
    args = parser.parse_args()
    cores = [int(c) for c in args.cores.split(",")]
    RESULTS.mkdir(exist_ok=True)
    if args.only in (None, "fig8"):
        fig8(args.repeat, args.duration, args.rate, cores)
    if args.only in (None, "fig9"):
        fig9(args.repeat, args.duration, args.rate, cores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
