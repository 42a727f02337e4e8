"""Platform benchmarks: generator capacity, the scheduler table for 3 light NFs, and chain lengths 1-8.

Usage (as root): .venv/bin/python bench/run_benchmarks.py [--repeat 3] [--duration 2] [--only NAME]
Writes bench/results/<name>.json.gz, .png and .md. Every number is a median of --repeat runs; ratios are
taken inside one invocation (same machine, same minutes), since the machines are noisy (+-30 %).
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import tandem  # noqa: E402
from bench.experiment_support import read_result  # noqa: E402
from bench.experiment_support import save_result as save  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.results.comparison_report import comparison_report  # noqa: E402
from controlplane.results.plot import plot_comparison  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402
from tandem import Spec, load_spec  # noqa: E402

RESULTS = HERE / "results"
# The platform's baselines: the kernel's policies, cooperative yielding, and run-to-completion as the ceiling (the
# papers' schedulers have benchmarks of their own).
BASELINES = ["cfs", "batch", "rr", "fifo", "coop", "rtc"]


def light_chain(length: int, cycles: int = 50) -> Spec:
    base = load_spec(HERE.parent / "examples" / "light-chain.yaml")
    spec = copy.deepcopy(base)
    template = base.chains[0].nfs[0]
    spec.name = f"light-chain-{length}"
    spec.chains[0].nfs = [
        template.model_copy(update={"name": f"light{i + 1}", "args": {"cycles": cycles}}) for i in range(length)
    ]
    return spec


def bench_generator(repeat: int, duration: float) -> None:
    spec_path = HERE / "generator-capacity.yaml"
    comparison = tandem.compare(spec_path, ["rtc"], repeat, duration, ceiling=False).as_json()
    mpps = comparison["schedulers"]["rtc"]["median"]["delivered_mpps"]
    verdict = "meets" if mpps >= 10 else "misses"
    save(
        "generator-capacity",
        comparison,
        comparison_report(comparison) + f"\n\ntarget >= 10 Mpps: {verdict} ({mpps:.2f} Mpps)",
    )


def bench_three_light(repeat: int, duration: float) -> None:
    spec_path = HERE.parent / "examples" / "light-chain.yaml"
    comparison = tandem.compare(spec_path, BASELINES, repeat, duration).as_json()
    medians = {n: e["median"]["delivered_mpps"] for n, e in comparison["schedulers"].items() if e["median"]}
    ratio = medians["coop"] / medians["rtc"]
    verdict = f"target coop >= 50 % of rtc: {'met' if ratio >= 0.5 else 'missed'} ({ratio:.0%})"
    save("three-light", comparison, comparison_report(comparison) + "\n\n" + verdict)
    plot_comparison(comparison, str(RESULTS / "three-light.png"))


def bench_chain_length(repeat: int, duration: float, lengths: list[int]) -> None:
    by_length = {}
    for length in lengths:
        spec = light_chain(length)
        print(f"chain length {length}...", file=sys.stderr, flush=True)
        comparison = tandem.compare(
            spec, BASELINES, repeat, duration, ceiling=False, source=f"bench light chain of {length}"
        ).as_json()
        by_length[length] = comparison
    rows = []
    for length, comparison in by_length.items():
        medians = {n: (e["median"] or {}).get("delivered_mpps") for n, e in comparison["schedulers"].items()}
        ceiling = medians.get("rtc")
        row = [length]
        for name in BASELINES:
            value = medians.get(name)
            row.append(
                "failed" if value is None else f"{value:.3f} ({value / ceiling:.0%})" if ceiling else f"{value:.3f}"
            )
        rows.append(row)
    text = (
        f"light (50-cycle) NFs chained on one core, 64 B: median delivered Mpps of {repeat} runs x {duration} s "
        f"(share of rtc)\non {machine_description()}\n\n" + table(["length"] + BASELINES, rows)
    )
    summary = {
        "machine": machine_description(),
        "repeat": repeat,
        "duration_s": duration,
        "lengths": {str(k): v for k, v in by_length.items()},
    }
    save("chain-length", summary, text)

    plot_chain_length(summary)


def plot_chain_length(summary: dict) -> None:
    """Draws chain-length.png from the saved summary (also: --replot, without running anything)."""
    lengths = sorted(summary["lengths"], key=int)
    figure, axis = plt.subplots(figsize=(8, 4.5))
    for name in BASELINES:
        ys = [(summary["lengths"][n]["schedulers"][name]["median"] or {}).get("delivered_mpps") for n in lengths]
        # A measured zero (fifo starving the chain) is drawn at zero; only a failed run is left out.
        axis.plot([int(n) for n in lengths], [float("nan") if y is None else y for y in ys], marker="o", label=name)
    axis.set_yscale("symlog", linthresh=0.01)
    axis.set_ylim(bottom=0)
    axis.set_xlabel("NFs in the chain (all on core 1)")
    axis.set_ylabel("delivered Mpps (median, symlog)")
    axis.set_title(f"Light NF chains on one core\n{summary['machine']}", fontsize=10)
    axis.legend(ncol=3)
    figure.tight_layout()
    figure.savefig(RESULTS / "chain-length.png", dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--lengths", default="1,2,3,4,5,6,7,8")
    parser.add_argument("--only", choices=["generator", "three-light", "chain-length"])
    parser.add_argument("--replot", action="store_true", help="redraw chain-length.png from the saved JSON")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    if args.replot:
        plot_chain_length(read_result("chain-length"))
        return 0
    if args.only in (None, "generator"):
        bench_generator(args.repeat, args.duration)
    if args.only in (None, "three-light"):
        bench_three_light(args.repeat, args.duration)
    if args.only in (None, "chain-length"):
        bench_chain_length(args.repeat, args.duration, [int(x) for x in args.lengths.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
