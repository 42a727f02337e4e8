"""A ServiceChain's spec changed in its NFs' arguments only (firewall rules, URL patterns), its placement the same:
the change its agents can make live (each NF's arguments built beside the running ones and swapped in between two
batches) instead of removing the chains and adding them again, which loses what was in them."""

from __future__ import annotations

import copy
from dataclasses import dataclass

from controlplane.kubernetes.cluster_placement import ClusterPlacement


@dataclass(frozen=True)
class ArgumentsChange:
    node: str
    nf: str  # as its agent names it
    args: dict
    before: dict  # what it runs now: given back where another NF's change is refused


def _nfs(chain: dict) -> list[dict]:
    return chain["nfs"] if chain.get("nfs") is not None else chain["graph"]["nodes"]


def _without_arguments(chains_by_node: dict[str, list[dict]]) -> dict[str, list[dict]]:
    bare = copy.deepcopy(chains_by_node)
    for chains in bare.values():
        for chain in chains:
            for nf in _nfs(chain):
                nf.pop("args", None)
    return bare


def arguments_changes(running: ClusterPlacement, placed: ClusterPlacement) -> list[ArgumentsChange] | None:
    """The NFs whose arguments differ between what runs and what the new spec placed, or None where anything else
    differs (a chain, an NF, a rate, a node, a core or a port): that change needs the chains added anew."""
    if running.split or placed.split or running.where != placed.where or running.node_ports != placed.node_ports:
        return None
    if _without_arguments(running.chains_by_node) != _without_arguments(placed.chains_by_node):
        return None
    changes = []
    for node, chains in sorted(placed.chains_by_node.items()):
        for chain, before_chain in zip(chains, running.chains_by_node[node], strict=True):
            for nf, before in zip(_nfs(chain), _nfs(before_chain), strict=True):
                args, old = nf.get("args") or {}, before.get("args") or {}
                if args != old:
                    changes.append(ArgumentsChange(node, nf["name"], args, old))
    return changes
