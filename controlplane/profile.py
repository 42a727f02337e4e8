"""The cycle estimator's control side: one profiling run per NF type and arguments, a cache, spec overrides,
and the process-controller switch-latency probe."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from controlplane import catalog
from controlplane.errors import RunFailed
from controlplane.report import machine_description

CACHE_PATH = Path(os.environ.get("TANDEM_CACHE_DIR", Path.home() / ".cache" / "tandem")) / "cycle-costs.json"


def cost_key(nf: dict) -> str:
    """NFs of one type with the same arguments cost the same: they share one estimate."""
    return json.dumps({"type": nf["type"], "args": nf.get("args", {})}, sort_keys=True)


def _machine_key() -> str:
    # An estimate holds for this CPU and this build of the NFs; anything else measures again.
    built = catalog.WORKER.stat() if catalog.WORKER.exists() else None
    return f"{machine_description()} | worker {built.st_size}:{int(built.st_mtime)}" if built else machine_description()


def load_cache() -> dict:
    try:
        cache = json.loads(CACHE_PATH.read_text())
    except (OSError, ValueError):
        return {}
    return cache.get("entries", {}) if cache.get("machine") == _machine_key() else {}


def save_cache(entries: dict) -> None:
    try:
        CACHE_PATH.parent.mkdir(parents=True, exist_ok=True)
        temporary = CACHE_PATH.with_suffix(".tmp")
        temporary.write_text(json.dumps({"machine": _machine_key(), "entries": entries}, indent=2))
        os.replace(temporary, CACHE_PATH)
    except OSError as error:
        print(f"tandem: note: cannot write the cycle-cost cache {CACHE_PATH}: {error.strerror}", file=sys.stderr)


def estimate_config(nf: dict, base: dict) -> dict:
    """A run of the NF alone on its core, fed probe batches by the manager instead of paced traffic."""
    return {
        "name": f"profile-{nf['name']}",
        "control_core": base["control_core"],
        "burst": base["burst"],
        "duration": 30,  # an upper bound: the run ends when the probes are done
        "warmup": 0,
        "scheduler": {"name": "cfs", "options": {}},
        "profile": {"estimate": {}},
        "chains": [{"name": "probe", "ring_capacity": 2048, "traffic": {"rate_pps": 0, "sizes": [[64, 1]], "flows": 64, "protocol": "udp"},
                    "nfs": [{"name": nf["name"], "type": nf["type"], "core": nf["core"], "args": nf.get("args", {})}]}],
    }


def estimate_nf(nf: dict, base: dict, source: str) -> dict:
    """Profiles one NF; returns the estimator's result (cycles_per_packet, per_size_cycles, ...)."""
    from controlplane.runner import require_success, run_once

    results = require_success(run_once(estimate_config(nf, base), source))
    estimate = results["profile"]["estimate"]
    if estimate.get("error") or estimate.get("cycles_per_packet") is None:
        raise RunFailed(f"cannot estimate the cost of NF {nf['name']}: {estimate.get('error') or 'the probes did not finish'}")
    if not results["accounting"]["exact"]:
        raise RunFailed(f"the profiling run of NF {nf['name']} lost packets; its estimate is not trusted")
    return {key: estimate[key] for key in ("cycles_per_packet", "ns_per_packet", "size_dependent", "per_size_cycles", "cycles_inside_nf")}


def cached_or_measured(cache: dict, key: str, measure) -> tuple[dict, str]:
    """The entry `key` of `cache` and "cache", or measure() and "profiled". A new measurement is written to
    the cache file at once, merged with what is there, so an interrupted profiling keeps what finished."""
    if key in cache:
        return cache[key], "cache"
    cache[key] = measure()
    stored = load_cache()
    stored[key] = cache[key]
    save_cache(stored)
    return cache[key], "profiled"


def estimate_costs(config: dict, source: str, refresh: bool = False, say=None) -> dict:
    """Cycle costs for every NF of a run config: {nf name: {cycles_per_packet, source, ...}}.

    The spec's cost_cycles wins; otherwise the cache; otherwise a profiling run (whose result is cached)."""
    cache = {} if refresh else load_cache()
    costs = {}
    for chain in config["chains"]:
        for nf in chain["nfs"]:
            if nf.get("cost_cycles"):
                costs[nf["name"]] = {"cycles_per_packet": nf["cost_cycles"], "source": "spec"}
                continue

            def measure(nf=nf):
                if say:
                    say(f"profiling {nf['name']} ({nf['type']}) alone on core {nf['core']}...")
                return estimate_nf(nf, config, source)

            entry, origin = cached_or_measured(cache, cost_key(nf), measure)
            costs[nf["name"]] = dict(entry, source=origin)
    return costs


def with_costs(config: dict, source: str, say=None) -> tuple[dict, dict]:
    """The config with every NF's cost_cycles filled in, and the costs with where each came from."""
    costs = estimate_costs(config, source, say=say)
    filled = json.loads(json.dumps(config))
    for chain in filled["chains"]:
        for nf in chain["nfs"]:
            nf["cost_cycles"] = costs[nf["name"]]["cycles_per_packet"]
    return filled, costs


def switch_latency(config: dict, source: str, core: int, rounds: int = 200) -> dict:
    """Measures every process-controller backend switching two idle NFs on `core`."""
    from controlplane.runner import require_success, run_once

    probe = {
        "name": "profile-switch-latency",
        "control_core": config["control_core"],
        "burst": config["burst"],
        "duration": 0.05,
        "warmup": 0,
        "scheduler": {"name": "cfs", "options": {}},
        "profile": {"switch_latency": {"rounds": rounds}},  # every backend the data plane has
        "chains": [{"name": f"idle{i}", "ring_capacity": 1024, "traffic": {"rate_pps": 1, "sizes": [[64, 1]], "flows": 1, "protocol": "udp"},
                    "nfs": [{"name": f"idle{i}", "type": "macswap", "core": core, "args": {}}]} for i in (1, 2)],
    }
    return require_success(run_once(probe, source))["profile"]["switch_latency"]
