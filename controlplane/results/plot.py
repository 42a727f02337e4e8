"""Plots of a comparison: delivered throughput per scheduler (with every run) and latency percentiles; latency
breakdowns."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402

from controlplane.results.comparison_report import NOISE_MARK  # noqa: E402
from controlplane.results.comparison_rounds import NOISY_SPREAD, best_rtc_by_round, rounds_of, scheduler_rounds  # noqa: E402


def plot_comparison(comparison: dict, path: str) -> None:
    """Throughput: a bar per scheduler at its median, a dot per run coloured by its round (a round whose dots all sit
    low or high is the machine's speed, not the schedulers'), labelled with the median of its per-round ratios to
    rtc; noisy schedulers are marked; the best rtc batch of the sweep, where it ran, is a bar of its own. Latency:
    each scheduler's median p50 and p99."""
    names = [n for n, e in comparison["schedulers"].items() if e["median"]]
    medians = [comparison["schedulers"][n]["median"] for n in names]
    figure, (throughput, latency) = plt.subplots(1, 2, figsize=(12, 4.5))

    columns = [
        (name, median["delivered_mpps"], comparison["schedulers"][name]["runs"], scheduler_rounds(comparison, name))
        for name, median in zip(names, medians, strict=True)
    ]
    best = (comparison.get("ceilings") or {}).get("best_rtc") or {}
    if best.get("mpps"):
        by_round = best_rtc_by_round(best)
        runs = [{"delivered_mpps": m, "round": r} for r, m in by_round.items()] if isinstance(by_round, dict) else []
        columns.append((f"best rtc, batch {best['batch']}", best["mpps"], runs, {"noisy": best.get("noisy")}))
    rounds = max((len(runs) for _, _, runs, _ in columns), default=1)
    colours = plt.cm.viridis
    bars = throughput.bar(range(len(columns)), [mpps for _, mpps, _, _ in columns], color="#9DB4D6")
    for i, (_, _, runs, _) in enumerate(columns):
        for round_, run in zip(rounds_of(runs), runs, strict=True):
            if run["delivered_mpps"] is not None:
                colour = colours((round_ - 1) / max(rounds - 1, 1))
                throughput.scatter([i], [run["delivered_mpps"]], color=colour, s=14, zorder=3, edgecolor="black")
    for bar, (_, _, _, figures) in zip(bars, columns, strict=True):
        if figures.get("median_vs_rtc") is not None:
            throughput.annotate(
                f"{figures['median_vs_rtc']:.0%}",
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=9,
            )
    throughput.set_xticks(
        range(len(columns)),
        [f"{name} {NOISE_MARK}" if figures.get("noisy") else name for name, _, _, figures in columns],
        rotation=30 if len(columns) > 6 else 0,  # every scheduler's name side by side overlaps
        ha="right" if len(columns) > 6 else "center",
    )
    for round_ in range(1, rounds + 1):  # a legend of the rounds' colours
        throughput.scatter([], [], color=colours((round_ - 1) / max(rounds - 1, 1)), s=14, label=f"round {round_}")
    # In a band of its own above the highest dot, so that it covers none.
    throughput.set_ylim(0, 1.2 * max((r["delivered_mpps"] or 0 for *_, runs, _ in columns for r in runs), default=1))
    throughput.legend(fontsize=7, loc="upper left", ncol=min(rounds, 6))
    throughput.set_ylabel("delivered Mpps (bar: median; dots: each run)")
    noisy_title = (
        f"; {NOISE_MARK}: runs differ over {NOISY_SPREAD}x" if any(f.get("noisy") for *_, f in columns) else ""
    )
    throughput.set_title(f"Throughput (labels: median of per-round ratios to rtc{noisy_title})", fontsize=10)

    x = range(len(names))
    width = 0.4
    p50 = [m["p50_us"] or 0 for m in medians]
    p99 = [m["p99_us"] or 0 for m in medians]
    latency.bar([i - width / 2 for i in x], p50, width, label="p50", color="#55A868")
    latency.bar([i + width / 2 for i in x], p99, width, label="p99", color="#C44E52")
    latency.set_xticks(list(x), names, rotation=30 if len(names) > 6 else 0, ha="right" if len(names) > 6 else "center")
    latency.set_yscale("log")
    latency.set_ylabel("latency, us (log)")
    latency.set_title("Latency of the worst chain")
    latency.legend()

    figure.suptitle(
        f"{comparison['spec_name']}: {comparison['repeat']} rounds x {comparison['duration_s']} s\n"
        f"{comparison['machine']}",
        fontsize=10,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_breakdown(bars: dict[str, tuple[dict[str, float], float]], title: str, path: str) -> None:
    """One stacked bar per label (a scheduler, or scheduler and chain): where a packet's time went, each part as a
    share of the packet's latency (explain.chain_parts), in path order, the latency itself beside the bar. Shares,
    not µs: schedulers' latencies differ by 1000x (rr's slices against rtc), which no common scale shows."""
    families = {
        "behind other work": plt.cm.Oranges,
        "NF not running": plt.cm.Reds,
        "split unknown": plt.cm.Greys,
        "in NF": plt.cm.Blues,
        "sink": plt.cm.Greens,
    }
    names: list[str] = []
    for parts, _ in bars.values():
        names += [name for name in parts if name not in names]
    figure, axis = plt.subplots(figsize=(11, 1.2 + 0.6 * len(bars)))
    labels = list(bars)
    left = [0.0] * len(labels)
    seen: dict[str, int] = {}
    for name in names:
        family = next((colours for key, colours in families.items() if key in name), plt.cm.Purples)
        seen[family.name] = seen.get(family.name, 0) + 1
        colour = family(0.35 + 0.5 * ((seen[family.name] * 0.37) % 1))
        widths = [100 * bars[label][0].get(name, 0.0) / bars[label][1] if bars[label][1] else 0.0 for label in labels]
        if not any(w > 0 for w in widths):
            continue
        axis.barh(labels, widths, left=left, color=colour, edgecolor="white", linewidth=0.5, label=name)
        left = [start + w for start, w in zip(left, widths, strict=True)]
    for i, label in enumerate(labels):
        axis.annotate(
            f"{bars[label][1]:,.1f} us",
            (left[i], i),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=9,
        )
    axis.set_xlim(0, 118)
    axis.set_xlabel("share of a packet's latency, % (mean over traced packets; the mean latency beside each bar)")
    axis.invert_yaxis()
    axis.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.25 - 0.05 * len(bars)))
    axis.set_title(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)


def plot_scaling(results: dict, path: str) -> None:
    """The auto-scaling timeline of a run: per scaled NF that changed (else the first), the packets a second that
    reached its instances, that they took and that were dropped at their input, the instances in use, and each
    decision (dashed: asked for; solid: every feeder made it)."""
    groups = [group for group in results.get("scaling") or [] if group["events"]] or (results.get("scaling") or [])[:1]
    figure, axes = plt.subplots(len(groups), 1, figsize=(10, 3.4 * len(groups)), squeeze=False)
    for axis, group in zip(axes[:, 0], groups, strict=True):
        samples = group["timeline"]
        t = [s["t_s"] for s in samples]
        for key, label, colour in (
            ("arrived_pps", "reached it", "#4C72B0"),
            ("processed_pps", "taken by its instances", "#55A868"),
            ("dropped_pps", "dropped at its input", "#C44E52"),
        ):
            axis.plot(t, [s[key] / 1e6 for s in samples], label=label, color=colour, linewidth=1.4)
        axis.set_ylabel("Mpps")
        axis.set_xlabel("seconds since the traffic started")
        instances = axis.twinx()
        instances.step(
            t, [s["instances"] for s in samples], where="post", color="black", linewidth=1.0, label="instances in use"
        )
        instances.set_ylabel("instances")
        instances.set_ylim(0, len(group["instances"]) + 0.5)
        instances.set_yticks(range(1, len(group["instances"]) + 1))
        for event in group["events"]:
            colour = "#8172B2" if event["change"] == "out" else "#937860"
            axis.axvline(event["t_s"], color=colour, linestyle="--", linewidth=0.9)
            if event["took_effect_s"] is not None:
                axis.axvline(event["took_effect_s"], color=colour, linewidth=0.9)
            # Right of its line, or left of it in the plot's right half, so that the text stays inside the axes.
            right_half = event["t_s"] > (t[0] + t[-1]) / 2 if t else False
            axis.annotate(
                f"scale {event['change']}: {event['instance']} (core {event['core']})",
                (event["t_s"], axis.get_ylim()[1]),
                xytext=(-3 if right_half else 3, -12),
                textcoords="offset points",
                fontsize=8,
                color=colour,
                ha="right" if right_half else "left",
            )
        lines = axis.get_legend_handles_labels()
        extra = instances.get_legend_handles_labels()
        # Below the axes: inside them it covered the lines it names.
        axis.legend(
            lines[0] + extra[0], lines[1] + extra[1], fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.2)
        )
        axis.set_title(
            f"{group['nf']}: {len(group['events'])} decisions, {group['held_peak']:,} packets held at most while flows "
            f"moved, {group['held_dropped']} of them dropped",
            fontsize=9,
        )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
