"""How much the cost profiles move between runs: each NF profiled N times the old way and the new way, interleaved.

The old way: one pass of 30 consecutive probes (the UNiS cost), or one run per batch size and a least-squares line
(Bubble's T(b) = k*b + c). The new way: interleaved rounds spread over time, medians and Theil-Sen lines.
Target: the middle 80 % of the new estimates within ±10 % of their median.

Usage (as root): .venv/bin/python bench/profile_spread.py [--repeat 10] [--only cost|batch]
Writes bench/results/profile-spread.{json.gz,md,png}."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy  # noqa: E402

from bench.experiment_support import save_result  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.planning import batch_model, profile  # noqa: E402
from controlplane.results.robust_estimate import spread  # noqa: E402
from controlplane.spec.deployment import run_config  # noqa: E402
from controlplane.spec.loading import load_spec  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

RESULTS = HERE / "results"
SPEC = HERE / "profile-spread.yaml"
TARGET = 0.10

# The estimator as it was before interleaved rounds: 10 warm-up probes, then the median of 30 in a row.
SINGLE_PASS = {"rounds": 1, "probes_per_round": 30, "warmup_probes": 10, "round_gap_s": 0}


def cost_once(nf: dict, config: dict, method: str) -> dict:
    if method == "single pass":
        return profile.estimate_nf(nf, config, SPEC.name, SINGLE_PASS)
    return profile.estimate_nf(nf, config, SPEC.name)


def batch_once(nf: dict, config: dict, method: str) -> dict:
    if method == "interleaved":
        model = batch_model.profile_nf(nf, config, SPEC.name)
        return {
            "value": model["k_cycles"],
            "c": model["c_cycles"],
            "c_negative": model["c_clamped"],
            "spread": model["spread"],
        }
    # One run per batch size, in order, and least squares (numpy.polyfit): what Bubble's profiling did before.
    points = []
    for batch in batch_model.PROFILE_BATCHES:
        run = profile.estimate_config(
            nf, config, dict(SINGLE_PASS, batches=[batch], frame_sizes=[64], probes_per_round=20, warmup_probes=5)
        )
        run["burst"] = batch
        estimate, _ = profile.estimator_run(run, nf, SPEC.name)
        points.append((batch, batch * profile.cost_from_samples(estimate)["cycles_per_packet"]))
    k, c = numpy.polyfit([p[0] for p in points], [p[1] for p in points], 1)
    return {"value": float(k), "c": float(c), "c_negative": c < 0, "spread": None}


def summary(values: list[float]) -> dict:
    low, high = numpy.percentile(values, [10, 90])
    return {
        "median": statistics.median(values),
        "p10": float(low),
        "p90": float(high),
        "min": min(values),
        "max": max(values),
        "middle80_within": spread(values),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--only", choices=["cost", "batch"])
    args = parser.parse_args()
    config = run_config(load_spec(SPEC))
    estimates = {
        "cost": (cost_once, ["single pass", "interleaved"]),
        "batch": (batch_once, ["per-batch runs", "interleaved"]),
    }
    found = {}
    with tempfile.TemporaryDirectory() as cache:
        profile.CACHE_PATH = Path(cache) / "unused.json"  # every estimate here is measured, none cached
        for what, (measure, methods) in estimates.items():
            if args.only and what != args.only:
                continue
            for chain in config["chains"]:
                nf = chain["nfs"][0]
                for repeat in range(args.repeat):
                    for method in methods:  # interleaved: a slow spell of the machine hits both methods alike
                        print(f"{what} {nf['name']} {method} {repeat + 1}/{args.repeat}", file=sys.stderr, flush=True)
                        entry = measure(nf, config, method)
                        value = entry.get("cycles_per_packet", entry.get("value"))
                        found.setdefault(f"{what}|{nf['name']}|{method}", []).append(dict(entry, value=value))
    rows, document = (
        [],
        {"machine": machine_description(), "repeat": args.repeat, "target_middle80_within": TARGET, "estimates": {}},
    )
    for key, entries in found.items():
        what, nf, method = key.split("|")
        values = [e["value"] for e in entries]
        s = summary(values)
        inside = [e["spread"] for e in entries if e.get("spread") is not None]
        negative = sum(1 for e in entries if e.get("c_negative"))
        document["estimates"][key] = dict(s, values=values, in_profile_spread=inside, negative_c=negative)
        verdict = ("met" if s["middle80_within"] <= TARGET else "missed") if method == "interleaved" else ""
        rows.append(
            [
                nf,
                "cycles/packet (UNiS)" if what == "cost" else "k of T(b) (Bubble)",
                method,
                f"{s['median']:.0f}",
                f"{s['p10']:.0f}..{s['p90']:.0f}",
                f"±{s['middle80_within']:.1%}",
                f"{s['min']:.0f}..{s['max']:.0f}",
                f"±{statistics.median(inside):.0%}" if inside else "-",
                f"{negative}" if what == "batch" else "-",
                verdict,
            ]
        )
    text = f"profile spread, {args.repeat} profiles per NF and method, interleaved ({document['machine']})\n\n" + table(
        [
            "NF",
            "estimate",
            "method",
            "median",
            "p10..p90",
            "middle 80 % within",
            "min..max",
            "spread in one profile",
            "c < 0",
            f"target ±{TARGET:.0%}",
        ],
        rows,
        align_left=3,
    )
    name = "profile-spread" if not args.only else f"profile-spread-{args.only}"
    save_result(name, document, text)
    plot(document, RESULTS / f"{name}.png")
    return 0


def plot(document: dict, path: Path) -> None:
    """Each profile's estimate relative to its method's median: the tighter the column, the more repeatable."""
    keys = list(document["estimates"])
    figure, axis = plt.subplots(figsize=(max(6, 1.3 * len(keys)), 4))
    for i, key in enumerate(keys):
        entry = document["estimates"][key]
        relative = [v / entry["median"] for v in entry["values"]]
        axis.scatter([i] * len(relative), relative, alpha=0.7)
    axis.axhspan(1 - TARGET, 1 + TARGET, color="green", alpha=0.1, label=f"±{TARGET:.0%} target")
    axis.set_xticks(range(len(keys)), [k.replace("|", "\n") for k in keys], fontsize=7)
    axis.set_ylabel("estimate / median of its method")
    axis.set_title(f"{document['repeat']} profiles per NF and method ({document['machine']})", fontsize=8)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
