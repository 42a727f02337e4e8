"""Bubble's linear batch-time model T(b) = k*b + c per NF type: a profiling run per batch size with the NF
alone on its core, then a least-squares line (numpy). Cached with the cycle costs."""
from __future__ import annotations

import numpy

from controlplane import profile
from controlplane.errors import RunFailed

PROFILE_BATCHES = (16, 32, 64, 128, 256, 512, 1024)


def fit_line(batches: list[float], cycles: list[float]) -> dict:
    """Least-squares T = k*b + c; r2 says how well a line explains the points."""
    if len(batches) < 2 or len(set(batches)) < 2:
        raise ValueError("a line needs points at two batch sizes at least")
    b, t = numpy.asarray(batches, dtype=float), numpy.asarray(cycles, dtype=float)
    k, c = numpy.polyfit(b, t, 1)
    residual = float(((t - (k * b + c)) ** 2).sum())
    spread = float(((t - t.mean()) ** 2).sum())
    return {"k_cycles": float(k), "c_cycles": float(c), "r2": 1 - residual / spread if spread > 0 else 1.0}


def _probe_config(nf: dict, base: dict, batch: int) -> dict:
    # The cycle estimator's run with the NF's burst set to the batch size: it pushes `batch` packets and
    # times them through. 64 B only: the model is per packet count, not per byte.
    config = profile.estimate_config(nf, base)  # one definition of the profiling run
    config["burst"] = batch
    config["profile"] = {"estimate": {"batch": batch, "repetitions": 20, "warmup_probes": 5, "size_dependence": 1e9}}
    return config


def profile_nf(nf: dict, base: dict, source: str, say=None) -> dict:
    from controlplane.runner import require_success, run_once

    points, hz = [], None
    for batch in PROFILE_BATCHES:
        if say:
            say(f"profiling {nf['name']} ({nf['type']}) with batches of {batch}...")
        results = require_success(run_once(_probe_config(nf, base, batch), source))
        estimate = results["profile"]["estimate"]
        per_packet = (estimate.get("per_size_cycles") or {}).get("64")
        if estimate.get("error") or per_packet is None:
            raise RunFailed(f"cannot profile NF {nf['name']} at batch {batch}: {estimate.get('error') or 'the probes did not finish'}")
        points.append([batch, per_packet * batch])
        hz = results["tsc_hz"]
    model = fit_line([p[0] for p in points], [p[1] for p in points])
    return dict(model, points=points, tsc_hz=hz)


def batch_models(config: dict, source: str, refresh: bool = False, say=None) -> dict:
    """{NF name: {k_cycles, c_cycles, r2, points, source}} for every NF of a run config; cached per type and args."""
    cache = {} if refresh else profile.load_cache()
    models = {}
    for chain in config["chains"]:
        for nf in chain["nfs"]:
            entry, origin = profile.cached_or_measured(cache, "batch-model " + profile.cost_key(nf),
                                                       lambda nf=nf: profile_nf(nf, config, source, say))
            models[nf["name"]] = dict(entry, source=origin)
    return models


def describe(models: dict) -> str:
    lines = ["NF batch-time model T(b) = k*b + c (TSC cycles), least squares over batches " + ", ".join(map(str, PROFILE_BATCHES))]
    for name, m in models.items():
        lines.append(f"  {name}: k = {m['k_cycles']:.1f} cycles/packet, c = {m['c_cycles']:.0f} cycles/batch, r2 = {m['r2']:.3f} ({m['source']})")
    return "\n".join(lines)

