"""Rates at which an NF type takes a given share of a node's core, by the costs each node's agent measured itself.

Two agents on one host measure the same NF apart (they measure at the same time on shared CPUs: one CI run saw
node-b's cost well above node-a's), so a rate meant to fit a core, or not to, is derived from both nodes' models:
what must fit, by the costliest; what must not, by the cheapest."""

from __future__ import annotations

import json

from bench.kubernetes_cluster import node_annotations
from controlplane.kubernetes.tandem_nodes import COSTS, TSC_HZ
from controlplane.spec.models import Spec

# A ServiceChain's runs take the spec's default burst, the batch bound placement costs a packet at.
PLANNED_BATCH = Spec.model_fields["burst"].default

NODES = ("node-a", "node-b")


def packet_seconds(cluster, nf_type: str = "cost", nodes=NODES) -> dict[str, tuple[float, float]]:
    """node -> (fewest, most) seconds of a core a packet of `nf_type` takes there, by the node's measured batch model:
    its slope alone (the limit of large batches) and what placement plans with, the slope plus the batch overhead
    shared by a batch of the run's burst (not a batch of one: a CI run's agent measured an overhead four times the
    slope while the other node's agent measured beside it, which left no rate between the premises)."""
    seconds = {}
    for node in nodes:
        notes = node_annotations(cluster, node)
        model = next(m for m in json.loads(notes[COSTS]) if m["type"] == nf_type)
        hz = float(notes[TSC_HZ])
        seconds[node] = (model["k_cycles"] / hz, (model["k_cycles"] + model["c_cycles"] / PLANNED_BATCH) / hz)
    return seconds


def rate_for_share(cluster, share: float, nodes=NODES) -> int:
    """Packets a second at which an NF takes at most `share` of a core on every node."""
    return int(share / max(most for _, most in packet_seconds(cluster, nodes=nodes).values()))


def rate_between(cluster, fit: int, apart: int, beside: float = 0.0, fit_everywhere: bool = True, nodes=NODES) -> int:
    """The middle of the rates at which `fit` NFs, with `beside` of a core taken by others, fit one core (on every
    node, or on the cheapest where not `fit_everywhere`), and `apart` NFs do not fit one core on any node. An
    AssertionError naming both nodes' costs where there is none: the agents measured too far apart for the premise."""
    seconds = packet_seconds(cluster, nodes=nodes)
    fewest = min(low for low, _ in seconds.values())
    fits_by = max if fit_everywhere else min
    most = fits_by(high for _, high in seconds.values())
    low, high = 1.0 / (apart * fewest), (1.0 - beside) / (fit * most)
    measured = ", ".join(f"{node} {low * 1e6:.2f}-{high * 1e6:.2f} us" for node, (low, high) in seconds.items())
    assert low < high, (
        f"no rate at which {fit} NFs (beside {beside:.2f} of a core) fit a core and {apart} do not: the nodes' agents "
        f"measured a packet at {measured}"
    )
    return int((low + high) / 2)
