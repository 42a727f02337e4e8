"""Plots of a comparison: delivered throughput per scheduler (with every run) and latency percentiles."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402


def plot_comparison(comparison: dict, path: str) -> None:
    names = [n for n, e in comparison["schedulers"].items() if e["median"]]
    medians = [comparison["schedulers"][n]["median"] for n in names]
    ceiling = comparison["schedulers"].get("rtc", {}).get("median") or {}
    figure, (throughput, latency) = plt.subplots(1, 2, figsize=(12, 4.5))

    bars = throughput.bar(names, [m["delivered_mpps"] for m in medians], color="#4C72B0")
    for i, name in enumerate(names):
        runs = [r["delivered_mpps"] for r in comparison["schedulers"][name]["runs"]]
        throughput.scatter([i] * len(runs), runs, color="black", s=10, zorder=3)
    if ceiling.get("delivered_mpps"):
        for bar, median in zip(bars, medians):
            throughput.annotate(f"{median['delivered_mpps'] / ceiling['delivered_mpps']:.0%}",
                                (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=9)
    throughput.set_ylabel("delivered Mpps (median; dots: runs)")
    throughput.set_title("Throughput (labels: share of rtc)")

    x = range(len(names))
    width = 0.4
    p50 = [m["p50_us"] or 0 for m in medians]
    p99 = [m["p99_us"] or 0 for m in medians]
    latency.bar([i - width / 2 for i in x], p50, width, label="p50", color="#55A868")
    latency.bar([i + width / 2 for i in x], p99, width, label="p99", color="#C44E52")
    latency.set_xticks(list(x), names)
    latency.set_yscale("log")
    latency.set_ylabel("latency, us (log)")
    latency.set_title("Latency of the worst chain")
    latency.legend()

    figure.suptitle(f"{comparison['spec_name']}: median of {comparison['repeat']} x {comparison['duration_s']} s\n{comparison['machine']}", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
