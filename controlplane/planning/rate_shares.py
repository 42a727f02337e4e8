"""The share of a graph chain's packets that each of its NFs and edges carries, measured by running the chain's own
traffic through it: a labelled fan-out splits the traffic as its packets decide, and a drop thins what follows.
The placement model needs these shares to charge each μNF for the packets that reach it, not the chain's whole rate."""

from __future__ import annotations

import copy
import hashlib
import json

from controlplane.errors import RunFailed
from controlplane.launch.runner import require_success, run_once
from controlplane.planning import profile

SHARE_RUN_RATE_PPS = 100_000.0  # low enough for one core to carry any shipped graph without a ring drop
SHARE_RUN_SECONDS = 1.0


def is_graph(chain: dict) -> bool:
    return bool(chain.get("edges"))


def upper_bound_shares(chain: dict) -> dict:
    """Every NF and edge counted at the chain's whole rate: exact for a line but for its drops, which only thin it;
    for a graph, whose fan-outs split the traffic, an upper bound where nothing measured the split."""
    names = [nf["name"] for nf in chain["nfs"]]
    if is_graph(chain):
        edges = [(edge["from"], edge["to"], 1.0) for edge in chain["edges"]]
        source = "not measured: every NF at the chain's whole rate (an upper bound)"
    else:
        edges = [(a, b, 1.0) for a, b in zip(names, names[1:], strict=False)]
        source = "a line: every NF at the chain's rate"
    return {"nfs": {name: 1.0 for name in names}, "edges": edges, "source": source}


def share_run_config(config: dict, chain: dict) -> dict:
    """The chain alone, every NF on the first placement core, its traffic at a rate one core carries whole."""
    core = config["placement_cores"][0]
    traffic = dict(chain["traffic"], rate_pps=SHARE_RUN_RATE_PPS, rate_steps_pps=[], mean_rate_pps=SHARE_RUN_RATE_PPS)
    nfs = [dict(nf, core=core) for nf in chain["nfs"]]
    return dict(
        copy.deepcopy(config),
        name=f"shares-{chain['name']}",
        placement="spec",
        duration=SHARE_RUN_SECONDS,
        warmup=0.0,
        scheduler={"name": "coop", "options": {}},
        chains=[dict(chain, nfs=nfs, traffic=traffic)],
    )


def shares_from_results(chain: dict, results: dict) -> dict:
    """Shares of the chain's generated packets: each NF's packets in, each edge ring's packets enqueued."""
    [measured] = [c for c in results["chains"] if c["name"] == chain["name"]]
    generated = measured["generated"]
    if not generated:
        raise RunFailed(f"measuring the rate shares of chain {chain['name']}: the generator sent nothing")
    if any(ring["dropped_full"] for ring in results["rings"]):
        raise RunFailed(
            f"measuring the rate shares of chain {chain['name']}: a ring dropped packets at "
            f"{SHARE_RUN_RATE_PPS / 1e3:.0f} kpps on one core, so the shares would be those of the drops"
        )
    nfs = {nf["name"]: nf["packets_in"] / generated for nf in results["nfs"] if nf["chain"] == chain["name"]}
    enqueued = {ring["name"]: ring["enqueued"] for ring in results["rings"]}
    edges = [
        (e["from"], e["to"], enqueued.get(f"{chain['name']}:{e['from']}->{e['to']}", 0) / generated)
        for e in chain["edges"]
    ]
    return {"nfs": nfs, "edges": edges, "source": f"measured: {generated} packets of the chain's own traffic"}


def _key(chain: dict) -> str:
    shape = {
        "nfs": [(nf["type"], nf["name"], nf.get("args")) for nf in chain["nfs"]],
        "edges": chain["edges"],
        "traffic": {
            k: v for k, v in chain["traffic"].items() if k not in ("rate_pps", "rate_steps_pps", "mean_rate_pps")
        },
    }
    return "rate-shares " + hashlib.sha256(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:16]


def chain_shares(config: dict, source: str, say=None) -> dict:
    """{chain: {"nfs": {nf: share}, "edges": [(from, to, share)], "source"}} for every chain of a run config; a
    graph's shares are measured once and cached (per machine, like the cost profiles)."""
    cache = profile.load_cache()
    shares = {}
    for chain in config["chains"]:
        if not is_graph(chain):
            shares[chain["name"]] = upper_bound_shares(chain)
            continue

        def measure(chain=chain) -> dict:
            if say:
                say(
                    f"measuring how chain {chain['name']}'s graph splits its traffic ({SHARE_RUN_SECONDS:.0f} s at "
                    f"{SHARE_RUN_RATE_PPS / 1e3:.0f} kpps)..."
                )
            return shares_from_results(chain, require_success(run_once(share_run_config(config, chain), source)))

        entry, origin = profile.cached_or_measured(cache, _key(chain), measure)
        entry = dict(entry, edges=[tuple(edge) for edge in entry["edges"]])  # JSON keeps tuples as lists
        shares[chain["name"]] = dict(entry, source=f"{entry['source']} ({origin})")
    return shares
