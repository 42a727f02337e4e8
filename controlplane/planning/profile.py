"""The cycle estimator's control side: one profiling run per NF type and arguments, robust estimates with their
spread, a cache, spec overrides, and the process-controller switch-latency probe."""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

from controlplane.errors import RunFailed
from controlplane.launch.runner import require_success, run_once
from controlplane.machine.description import machine_description
from controlplane.results.robust_estimate import SPREAD_WARNING, median_with_spread, spread
from controlplane.spec import catalog

CACHE_PATH = Path(os.environ.get("TANDEM_CACHE_DIR", Path.home() / ".cache" / "tandem")) / "cycle-costs.json"


CACHE_FORMAT = 2  # entries carry their spread and date since format 2; older caches are measured again


def cost_key(nf: dict, base: dict | None = None) -> str:
    """NFs of one type with the same arguments, fed the same kind of frames, cost the same: they share one estimate."""
    key = {"type": nf["type"], "args": nf.get("args", {})}
    own = own_frames(nf, base) if base else None
    if own:  # an HTTP μNF's cost depends on the requests it parses: one estimate per request mix or capture
        key["frames"] = hashlib.sha256(json.dumps(own, sort_keys=True).encode()).hexdigest()[:16]
    return json.dumps(key, sort_keys=True)


def own_frames(nf: dict, base: dict) -> dict | None:
    """The traffic of `nf`'s chain when it decides the frames themselves (HTTP requests, a capture), for the probes
    to send; None when the chain's frames are templates of a size, which the estimator's plan sweeps itself."""
    for chain in base.get("chains", []):
        if any(member["name"] == nf["name"] for member in chain["nfs"]):
            traffic = chain["traffic"]
            if traffic.get("http_urls") or traffic.get("pcap"):
                return dict(traffic, rate_pps=0, rate_steps_pps=[], mean_rate_pps=0)
    return None


def _machine_key() -> str:
    # An estimate holds for this CPU and this build of the NFs; anything else measures again.
    built = catalog.WORKER.stat() if catalog.WORKER.exists() else None
    return f"{machine_description()} | worker {built.st_size}:{int(built.st_mtime)}" if built else machine_description()


def load_cache() -> dict:
    try:
        cache = json.loads(CACHE_PATH.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(cache, dict) or cache.get("format") != CACHE_FORMAT or cache.get("machine") != _machine_key():
        return {}
    return cache.get("entries", {})


def save_cache(entries: dict) -> None:
    try:
        CACHE_PATH.parent.mkdir(parents=True, exist_ok=True)
        temporary = CACHE_PATH.with_suffix(".tmp")
        temporary.write_text(
            json.dumps({"format": CACHE_FORMAT, "machine": _machine_key(), "entries": entries}, indent=2)
        )
        os.replace(temporary, CACHE_PATH)
    except OSError as error:
        print(f"tandem: note: cannot write the cycle-cost cache {CACHE_PATH}: {error.strerror}", file=sys.stderr)


def estimate_config(nf: dict, base: dict, plan: dict | None = None) -> dict:
    """A run of the NF alone on its core, fed probe batches by the manager instead of paced traffic. `plan` is the
    estimator's (dataplane/observation/cycle_estimator.h: batches, frame_sizes, rounds, ...); left out, its defaults."""
    return {
        "name": f"profile-{nf['name']}",
        "control_core": base["control_core"],
        "burst": base["burst"],
        "prefetch": base.get("prefetch", 0),  # costs as the run will have them
        "duration": 60,  # an upper bound: the run ends when the probes are done
        "warmup": 0,
        "scheduler": {"name": "cfs", "options": {}},
        "profile": {"estimate": plan or {}},
        "chains": [
            {
                "name": "probe",
                "ring_capacity": 2048,
                "traffic": own_frames(nf, base) or {"rate_pps": 0, "sizes": [[64, 1]], "flows": 64, "protocol": "udp"},
                "nfs": [{"name": nf["name"], "type": nf["type"], "core": nf["core"], "args": nf.get("args", {})}],
            }
        ],
    }


def estimator_run(config: dict, nf: dict, source: str) -> tuple[dict, dict]:
    """Runs a profiling config; returns the estimator's result (with its samples) and the run's results."""
    results = require_success(run_once(config, source))
    estimate = results["profile"]["estimate"]
    if estimate.get("error") or not estimate.get("complete"):
        raise RunFailed(
            f"cannot estimate the cost of NF {nf['name']}: {estimate.get('error') or 'the probes did not finish'}"
        )
    if not results["accounting"]["exact"]:
        raise RunFailed(f"the profiling run of NF {nf['name']} lost packets; its estimate is not trusted")
    return estimate, results


def sample_rows(estimate: dict) -> list[dict]:
    """The estimator's samples as {batch, frame_size, round, cycles_per_packet} rows."""
    columns = estimate["samples_columns"]
    return [dict(zip(columns, row, strict=False)) for row in estimate["samples"]]


def cost_from_samples(estimate: dict) -> dict:
    """UNiS's cost from the rounds at the first batch size: the median per frame size, taken at 64 B or, when the
    cost grows with the frame, averaged over every size measured (the paper's treatment of variable-cost NFs).
    The spread is that of the same estimate made from each round alone."""
    batch = estimate["batches"][0]
    by_size: dict[int, dict[int, float]] = {}
    for row in sample_rows(estimate):
        if row["batch"] == batch:
            by_size.setdefault(row["frame_size"], {})[row["round"]] = row["cycles_per_packet"]
    per_size = {size: median_with_spread(rounds.values())["value"] for size, rounds in sorted(by_size.items())}
    used = sorted(by_size) if estimate["size_dependent"] else [min(by_size)]
    rounds = set.intersection(*(set(by_size[size]) for size in used))
    per_round = [statistics.mean(by_size[size][r] for size in used) for r in sorted(rounds)]
    return {
        "cycles_per_packet": statistics.mean(per_size[size] for size in used),
        "spread": spread(per_round) if len(per_round) >= 2 else None,  # one round cannot show how much it moves
        "rounds": len(per_round),
        "size_dependent": estimate["size_dependent"],
        "per_size_cycles": {str(size): value for size, value in per_size.items()},
    }


def estimate_nf(nf: dict, base: dict, source: str, plan: dict | None = None) -> dict:
    """Profiles one NF; returns {cycles_per_packet, spread, rounds, ns_per_packet, per_size_cycles, ...}."""
    estimate, results = estimator_run(estimate_config(nf, base, plan), nf, source)
    cost = cost_from_samples(estimate)
    cost["ns_per_packet"] = cost["cycles_per_packet"] / results["tsc_hz"] * 1e9
    cost["cycles_inside_nf"] = estimate.get("cycles_inside_nf")
    cost["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    return cost


def warn_if_spread(nf: dict, entry: dict, what: str) -> None:
    """Names the NF whose estimate moved more than SPREAD_WARNING between rounds: its figures are less sure."""
    if (entry.get("spread") or 0) > SPREAD_WARNING:
        print(
            f"tandem: warning: the {what} of NF {nf['name']} ({nf['type']}) varies ±{entry['spread']:.0%} "
            f"between profiling rounds (more than ±{SPREAD_WARNING:.0%}: the machine was noisy while it was measured); "
            "`./tandem profile --refresh SPEC` measures it again",
            file=sys.stderr,
        )


def cached_costs(chain: dict) -> dict[str, float]:
    """The cycles per packet the cache holds of each NF of `chain` (a chain's config) on this machine and build, by
    NF name: a service's added chain, whose NFs are not profiled while the service runs, takes them from here."""
    cache, base = load_cache(), {"chains": [chain]}
    entries = {nf["name"]: cache.get(cost_key(nf, base)) for nf in chain["nfs"]}
    return {
        name: entry["cycles_per_packet"]
        for name, entry in entries.items()
        if isinstance(entry, dict) and entry.get("cycles_per_packet")
    }


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

            entry, origin = cached_or_measured(cache, cost_key(nf, config), measure)
            warn_if_spread(nf, entry, "cost estimate")
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
    probe = {
        "name": "profile-switch-latency",
        "control_core": config["control_core"],
        "burst": config["burst"],
        "duration": 0.05,
        "warmup": 0,
        "scheduler": {"name": "cfs", "options": {}},
        "profile": {"switch_latency": {"rounds": rounds}},  # every backend the data plane has
        "chains": [
            {
                "name": f"idle{i}",
                "ring_capacity": 1024,
                "traffic": {"rate_pps": 1, "sizes": [[64, 1]], "flows": 1, "protocol": "udp"},
                "nfs": [{"name": f"idle{i}", "type": "macswap", "core": core, "args": {}}],
            }
            for i in (1, 2)
        ],
    }
    return require_success(run_once(probe, source))["profile"]["switch_latency"]
