"""Where a chain's graph may be cut between two nodes: at an edge that is the only way from the NFs before it to
the NFs after it, its source sending nothing else (one unlabelled out-edge), its target fed by nothing else, every
NF that no edge feeds before it and every NF that feeds no other after it. A wire between nodes carries one edge's
packets from one NF to one NF, so a part joined by it has one entry and one exit; a cut anywhere else would part a
classifier's ways or a parallel group's branches, each way a wire and each part several entries or exits. The NFs
between two such edges (a block) stay on one node; in a line every edge is one, and each NF a block."""

from __future__ import annotations

from controlplane.spec.chain_graph import Edge, topological_order


def cut_edges(names: list[str], edges: list[Edge]) -> list[tuple[str, str]]:
    """The edges (from, to) the graph may be cut at, in chain order."""
    out_edges = {name: [edge for edge in edges if edge.source == name] for name in names}
    in_edges = {name: [edge for edge in edges if edge.target == name] for name in names}
    entries = {name for name in names if not in_edges[name]}
    exits = {name for name in names if not out_edges[name]}
    order = topological_order(names, edges)
    found = []
    for cut in edges:
        if cut.label is not None or len(out_edges[cut.source]) != 1 or len(in_edges[cut.target]) != 1:
            continue
        before = _connected(cut.source, [edge for edge in edges if edge != cut])
        if cut.target not in before and entries <= before and not exits & before:
            found.append((cut.source, cut.target))
    return sorted(found, key=lambda edge: order.index(edge[0]))


def blocks(names: list[str], edges: list[Edge]) -> list[list[str]]:
    """The NFs between consecutive cut edges, in chain order, each block's NFs in chain order: block k + 1 begins
    where cut edge k ends."""
    cuts = cut_edges(names, edges)
    order = topological_order(names, edges)
    starts = [order[0], *(to for _, to in cuts)] if order else []
    block_of: dict[str, int] = {}
    for name in order:  # a block's NFs are fed from within it, but its first; every entry is in the first block
        feeders = [edge.source for edge in edges if edge.target == name and (edge.source, edge.target) not in cuts]
        block_of[name] = starts.index(name) if name in starts else block_of[feeders[0]] if feeders else 0
    return [[name for name in order if block_of[name] == k] for k in range(len(starts))]


def _connected(start: str, edges: list[Edge]) -> set[str]:
    """The NFs joined to `start` by `edges`, whichever way each edge points."""
    seen, frontier = {start}, [start]
    while frontier:
        name = frontier.pop()
        for edge in edges:
            for near, far in ((edge.source, edge.target), (edge.target, edge.source)):
                if near == name and far not in seen:
                    seen.add(far)
                    frontier.append(far)
    return seen
