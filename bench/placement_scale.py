"""How long the placement search takes as instances grow, and how close to the best possible it answers.

Instances: chains of 3 NFs, each NF k = 50..400 cycles a packet and c = 200..2,000 cycles a batch (the range of
this catalog's measured profiles), each chain's rate 0.2..3 Mpps, a 2.5 GHz TSC. Throughput (Bubble): the cores
carry 70 % of the offered work, so chains must be rejected; fewest cores (μNF-MC): cores for 1.4x the work.
Chain counts 100, 500 and 2,000 (the issue's cluster scale), on one machine's cores and across nodes of 16
cores each (fewest cores, the fewest packets between nodes), and the small fewest-cores instances that had no
answer before the time limit (16 NFs over 8 cores up to 64 over 16, chains of 4). Every instance is solved with
the default time limit (20 s) and a few seeds; the table gives medians. The gap is the one the search proved
(HiGHS's bound where one program was solved, the counting bounds of controlplane/planning/first_fit.py
otherwise), so it is an upper bound on how far from the optimum the answer is.

Usage: .venv/bin/python bench/placement_scale.py [--seeds 3] [--time-limit 20]
Writes bench/results/placement-scale.{json.gz,md,png}."""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bench.experiment_support import save_result  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.planning.placement import PlacedNf, solve  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

RESULTS = HERE / "results"
HZ = 2.5e9
UPPER = 1024
CHAIN_COUNTS = (100, 500, 2000)
SMALL = ((16, 8), (32, 16), (64, 16))  # NFs, cores: fewest cores, chains of 4
NODE_CORES = 16


def instance(seed: int, chains: int, length: int, cores_for_work) -> tuple[list[PlacedNf], list[int], list]:
    rng = random.Random(seed)
    nfs = []
    for c in range(chains):
        rate = rng.uniform(0.2e6, 3e6)
        nfs += [
            PlacedNf(f"c{c}.{k}", f"c{c}", rate, 1.0, rng.uniform(50, 400), rng.uniform(200, 2000))
            for k in range(length)
        ]
    work = sum(nf.rate_pps * (nf.k_cycles + nf.c_cycles / UPPER) / HZ for nf in nfs)
    edges = [(a.name, b.name, 1.0) for a, b in zip(nfs, nfs[1:], strict=False) if a.chain == b.chain]
    return nfs, list(range(max(2, round(cores_for_work(work))))), edges


def measure(label: str, objective: str, build, seeds: int, time_limit: float, node_cores: int = 0) -> dict:
    runs = []
    for seed in range(seeds):
        nfs, cores, edges = build(seed)
        node_of = {core: f"node{core // node_cores}" for core in cores} if node_cores else None
        began = time.monotonic()
        solution = solve(
            nfs, cores, HZ, UPPER, objective=objective, edges=edges, time_limit_s=time_limit, node_of=node_of
        )
        runs.append(
            {
                "seed": seed,
                "nfs": len(nfs),
                "cores": len(cores),
                "seconds": time.monotonic() - began,
                "stopped": solution["stopped"],
                "method": solution["method"],
                "gap": solution["optimality_gap"],
                "objective": solution["objective"],
                "bound": solution["bound"],
                "cores_used": len(solution["cores_used"]),
                "accepted": len(solution["accepted"]),
                "chains": len(solution["accepted"]) + len(solution["rejected"]),
                "edges_between_nodes": len(solution.get("edges_between_nodes", [])),
            }
        )
        print(f"  {label} {objective} seed {seed}: {runs[-1]['seconds']:.1f} s, gap {runs[-1]['gap']:.2%}", flush=True)
    return {"label": label, "objective": objective, "runs": runs}


def row(entry: dict) -> list[str]:
    runs = entry["runs"]

    def median(key):
        return statistics.median(run[key] for run in runs)

    if entry["objective"] == "fewest_cores":
        result = f"{median('cores_used'):.0f} cores (bound {statistics.median(run['bound'] for run in runs):.1f})"
        if "nodes" in entry["label"]:
            result += f", {median('edges_between_nodes'):.0f} edges between nodes"
    else:
        result = f"{median('accepted'):.0f} of {runs[0]['chains']} chains accepted"
    stops = sorted({run["stopped"] for run in runs})
    return [
        entry["label"],
        "fewest cores" if entry["objective"] == "fewest_cores" else "throughput",
        f"{runs[0]['nfs']} x {runs[0]['cores']}",
        f"{median('seconds'):.1f}",
        f"{max(run['seconds'] for run in runs):.1f}",
        f"{median('gap'):.2%}",
        result,
        ", ".join(stops),
    ]


def plot(entries: list[dict], path: Path) -> None:
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    series = (
        ("throughput (Bubble)", "throughput", "chains", "o"),
        ("fewest cores (μNF-MC)", "fewest_cores", "chains", "s"),
        (f"fewest cores, nodes of {NODE_CORES} cores", "fewest_cores", "cores", "^"),
    )
    for name, objective, ending, marker in series:
        chosen = [entry for entry in entries if entry["objective"] == objective and entry["label"].endswith(ending)]
        chosen = [entry for entry in chosen if "chains" in entry["label"]]
        counts = [int(entry["label"].split()[0]) for entry in chosen]
        left.plot(
            counts, [statistics.median(r["seconds"] for r in e["runs"]) for e in chosen], marker=marker, label=name
        )
        right.plot(counts, [100 * statistics.median(r["gap"] for r in e["runs"]) for e in chosen], marker=marker)
    for axis, title in ((left, "placement time (s, median)"), (right, "proved optimality gap (%, median)")):
        axis.set_xscale("log")
        axis.set_xlabel("chains (3 NFs each)")
        axis.set_title(title)
        axis.grid(alpha=0.3)
    left.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=20.0)
    args = parser.parse_args()
    entries = []
    for nfs, cores in SMALL:

        def small(seed, nfs=nfs, cores=cores):
            built, _, edges = instance(seed, nfs // 4, 4, lambda work: 1)
            scale = 0.6 * cores / sum(nf.rate_pps * (nf.k_cycles + nf.c_cycles / UPPER) / HZ for nf in built)
            for nf in built:  # the work at 60 % of the cores, as the instances
                nf.rate_pps *= scale
            return built, list(range(cores)), edges

        entries.append(measure(f"{nfs} NFs", "fewest_cores", small, args.seeds, args.time_limit))
    for chains in CHAIN_COUNTS:
        for objective, cores_for_work in (("throughput", lambda w: 0.7 * w), ("fewest_cores", lambda w: 1.4 * w)):
            entries.append(
                measure(
                    f"{chains} chains",
                    objective,
                    lambda seed, chains=chains, cores_for_work=cores_for_work: instance(
                        seed, chains, 3, cores_for_work
                    ),
                    args.seeds,
                    args.time_limit,
                )
            )
    for chains in CHAIN_COUNTS:
        entries.append(
            measure(
                f"{chains} chains, nodes of {NODE_CORES} cores",
                "fewest_cores",
                lambda seed, chains=chains: instance(seed, chains, 3, lambda w: 1.4 * w),
                args.seeds,
                args.time_limit,
                node_cores=NODE_CORES,
            )
        )
    machine = machine_description()
    text = "\n".join(
        [
            f"placement search, time limit {args.time_limit:.0f} s, median of {args.seeds} seeds ({machine}):",
            table(
                ["instance", "objective", "NFs x cores", "median s", "max s", "proved gap", "result", "stopped"],
                [row(entry) for entry in entries],
            ),
        ]
    )
    RESULTS.mkdir(exist_ok=True)
    plot(entries, RESULTS / "placement-scale.png")
    save_result("placement-scale", {"machine": machine, "time_limit_s": args.time_limit, "entries": entries}, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
