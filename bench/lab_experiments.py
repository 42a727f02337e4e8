"""Real applications as traffic, against the kernel: the lab of examples/lab-firewalls.yaml (ping and an iperf3 TCP
transfer between two network namespaces, through three firewalls of 100 rules on one NF core) under each scheduler,
and the same hosts and commands through a Linux bridge whose nftables rules equal the firewalls', interleaved round
by round (compare does both). Reports what the clients measured, as ratios to the kernel's.

Usage (as root): .venv/bin/python bench/lab_experiments.py [--repeat 3] [--schedulers coop,bubble,unis,nfvnice,cfs]
Writes bench/results/lab-kernel.json.gz, .md and .png.
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

import tandem  # noqa: E402
from bench.experiment_support import RESULTS, read_result  # noqa: E402
from bench.experiment_support import save_result as save  # noqa: E402
from controlplane.results.comparison_report import comparison_report, median_of  # noqa: E402

SPEC = HERE.parent / "examples" / "lab-firewalls.yaml"
SCHEDULERS = ["coop", "bubble", "unis", "nfvnice", "cfs"]


def lab_kernel(repeat: int, schedulers: list[str]) -> None:
    comparison = tandem.compare(SPEC, schedulers, repeat, quiet=False, source="bench lab-firewalls").as_json()
    save("lab-kernel", comparison, comparison_report(comparison))
    plot_lab_kernel(comparison)


def plot_lab_kernel(comparison: dict) -> None:
    """Goodput and ping's round trip per scheduler and for the kernel: a bar at the median, a dot per run."""
    columns = [(name, entry["runs"]) for name, entry in comparison["schedulers"].items() if entry["runs"]]
    kernel = comparison.get("kernel") or {}
    if kernel.get("runs"):
        columns.append(("kernel", kernel["runs"]))
    if (kernel.get("offloads_on") or {}).get("runs"):
        columns.append(("kernel,\noffloads on", kernel["offloads_on"]["runs"]))
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for axis, field, label in (
        (axes[0], "lab_goodput_gbps", "iperf3 TCP goodput (Gbit/s)"),
        (axes[1], "lab_rtt_p50_us", "ping round trip, p50 (us)"),
    ):
        medians = [median_of([run.get(field) for run in runs]) for _, runs in columns]
        colours = ["#D9A25F" if name.startswith("kernel") else "#9DB4D6" for name, _ in columns]
        axis.bar(range(len(columns)), [m or 0 for m in medians], color=colours)
        for i, (_, runs) in enumerate(columns):
            values = [run.get(field) for run in runs if run.get(field) is not None]
            axis.scatter([i] * len(values), values, color="black", s=12, zorder=3)
        axis.set_xticks(range(len(columns)), [name for name, _ in columns])
        axis.set_ylabel(label)
    figure.suptitle("lab-firewalls: each scheduler's chain against the kernel's bridge with the same rules (nftables)")
    figure.tight_layout()
    figure.savefig(RESULTS / "lab-kernel.png", dpi=110)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--schedulers", default=",".join(SCHEDULERS))
    parser.add_argument("--replot", action="store_true", help="draw the figure again from the saved result")
    args = parser.parse_args()
    if args.replot:
        plot_lab_kernel(read_result("lab-kernel"))
        return
    lab_kernel(args.repeat, args.schedulers.split(","))


if __name__ == "__main__":
    main()
