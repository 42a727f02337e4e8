"""Bubble's linear batch-time model T(b) = k*b + c per NF type: one profiling run with the NF alone on its core that
times every batch size in interleaved rounds, then a Theil-Sen line with its spread between rounds. Cached with
the cycle costs."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime

from controlplane.planning import profile
from controlplane.results.robust_estimate import spread, theil_sen_line

PROFILE_BATCHES = (16, 32, 64, 128, 256, 512, 1024)


def fit_batch_time(rows: list[dict]) -> dict:
    """T(b) = k*b + c over every round's sample, {batch, round, cycles_per_packet} rows; the spread is that of
    k fitted to each round alone; points are the per-batch medians, for display."""
    line = theil_sen_line([r["batch"] for r in rows], [r["batch"] * r["cycles_per_packet"] for r in rows])
    by_round: dict[int, list[dict]] = {}
    for row in rows:
        by_round.setdefault(row["round"], []).append(row)
    slopes = [
        theil_sen_line([r["batch"] for r in group], [r["batch"] * r["cycles_per_packet"] for r in group])["k"]
        for group in by_round.values()
        if len({r["batch"] for r in group}) >= 2
    ]
    batches = sorted({r["batch"] for r in rows})
    points = [[b, statistics.median(b * r["cycles_per_packet"] for r in rows if r["batch"] == b)] for b in batches]
    model = {
        "k_cycles": line["k"],
        "c_cycles": line["c"],
        "c_clamped": line["c_clamped"],
        "spread": spread(slopes) if len(slopes) >= 2 else None,
        "rounds": len(slopes),
        "points": points,
    }
    if line["c_clamped"]:
        model["c_raw_cycles"] = line["c_raw"]
    return model


def _probe_plan() -> dict:
    # 64 B only: the model is per packet count, not per byte. The NF's burst is the largest batch, so it takes
    # each probe whole, whatever its size.
    return {"batches": list(PROFILE_BATCHES), "frame_sizes": [64]}


def profile_nf(nf: dict, base: dict, source: str, say=None) -> dict:
    if say:
        say(
            f"profiling {nf['name']} ({nf['type']}) with batches of "
            f"{PROFILE_BATCHES[0]}..{PROFILE_BATCHES[-1]}, interleaved..."
        )
    config = profile.estimate_config(nf, base, _probe_plan())
    config["burst"] = max(PROFILE_BATCHES)
    estimate, results = profile.estimator_run(config, nf, source)
    model = fit_batch_time(profile.sample_rows(estimate))
    return dict(model, tsc_hz=results["tsc_hz"], measured_at=datetime.now(UTC).isoformat(timespec="seconds"))


def batch_models(config: dict, source: str, refresh: bool = False, say=None) -> dict:
    """{NF name: {k_cycles, c_cycles, spread, points, source, ...}} for every NF of a run config; cached per type and
    args."""
    cache = {} if refresh else profile.load_cache()
    models = {}
    for chain in config["chains"]:
        for nf in chain["nfs"]:
            entry, origin = profile.cached_or_measured(
                cache, "batch-model " + profile.cost_key(nf, config), lambda nf=nf: profile_nf(nf, config, source, say)
            )
            profile.warn_if_spread(nf, entry, "per-packet batch cost k")
            models[nf["name"]] = dict(entry, source=origin)
    return models


def describe(models: dict) -> str:
    lines = [
        "NF batch-time model T(b) = k*b + c (TSC cycles), Theil-Sen over interleaved rounds of batches "
        + ", ".join(map(str, PROFILE_BATCHES))
        + "; spread = k's between rounds"
    ]
    for name, m in models.items():
        clamped = f" (fit gave {m['c_raw_cycles']:.0f}: a fixed cost below zero, clamped)" if m.get("c_clamped") else ""
        spread_text = f" ±{m['spread']:.0%}" if m.get("spread") is not None else ""
        lines.append(
            f"  {name}: k = {m['k_cycles']:.1f} cycles/packet{spread_text}, c = {m['c_cycles']:.0f} cycles/batch"
            f"{clamped} ({m['source']})"
        )
    return "\n".join(lines)
