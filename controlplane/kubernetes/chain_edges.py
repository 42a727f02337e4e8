"""A spec's chain as NF pairs: its edges (along its line or its graph's), the NFs nothing feeds (its entry's) and
the NFs that feed nothing (its exit's), read by the status's hops and by the pins of a chain's ports."""

from __future__ import annotations


def _names(chain: dict) -> list[str]:
    graph = chain.get("graph")
    return [nf["name"] for nf in (graph["nodes"] if graph else chain["nfs"])]


def edges_of(chain: dict) -> list[tuple[str, str]]:
    """(from, to) of each ring between two of the chain's NFs."""
    graph = chain.get("graph")
    if graph:
        return [(edge["from"], edge["to"]) for edge in graph.get("edges", [])]
    names = _names(chain)
    return list(zip(names, names[1:], strict=False))


def entry_nfs(chain: dict) -> list[str]:
    """The NFs that take from the chain's entry: those no other NF feeds."""
    fed = {to for _, to in edges_of(chain)}
    return [name for name in _names(chain) if name not in fed]


def exit_nfs(chain: dict) -> list[str]:
    """The NFs that send to the chain's exit: those that feed no other NF."""
    feeding = {source for source, _ in edges_of(chain)}
    return [name for name in _names(chain) if name not in feeding]
