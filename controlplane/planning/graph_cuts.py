"""Where a chain's graph may be cut between two nodes: at an edge that is the only way from the NFs before it to
the NFs after it, its source sending nothing else (one unlabelled out-edge), its target fed by nothing else, every
NF that no edge feeds before it and every NF that feeds no other after it. A wire between nodes carries one edge's
packets from one NF to one NF, so a part joined by it has one entry and one exit; a cut anywhere else would part a
classifier's ways or a parallel group's branches, each way a wire and each part several entries or exits. The NFs
between two such edges (a block) stay on one node; in a line every edge is one, and each NF a block."""

from __future__ import annotations

Edge = tuple[str, str, str | None]  # from, to, the gate's label (None: unlabelled)


def chain_order(names: list[str], edges: list[Edge]) -> list[str]:
    """The NFs in an order where each comes after every NF that feeds it (Kahn's, ties in the order given)."""
    feeding = {name: 0 for name in names}
    for _, to, _ in edges:
        feeding[to] += 1
    ready = [name for name in names if feeding[name] == 0]
    order = []
    while ready:
        name = ready.pop(0)
        order.append(name)
        for source, to, _ in edges:
            if source == name:
                feeding[to] -= 1
                if feeding[to] == 0:
                    ready.append(to)
    return order


def cut_edges(names: list[str], edges: list[Edge]) -> list[tuple[str, str]]:
    """The edges (from, to) the graph may be cut at, in chain order."""
    out_edges = {name: [edge for edge in edges if edge[0] == name] for name in names}
    in_edges = {name: [edge for edge in edges if edge[1] == name] for name in names}
    entries = {name for name in names if not in_edges[name]}
    exits = {name for name in names if not out_edges[name]}
    order = chain_order(names, edges)
    found = []
    for source, to, label in edges:
        if label is not None or len(out_edges[source]) != 1 or len(in_edges[to]) != 1:
            continue
        before = _connected(source, [edge for edge in edges if (edge[0], edge[1]) != (source, to)])
        if to not in before and entries <= before and not exits & before:
            found.append((source, to))
    return sorted(found, key=lambda edge: order.index(edge[0]))


def blocks(names: list[str], edges: list[Edge]) -> list[list[str]]:
    """The NFs between consecutive cut edges, in chain order, each block's NFs in chain order: block k + 1 begins
    where cut edge k ends."""
    cuts = cut_edges(names, edges)
    order = chain_order(names, edges)
    starts = [order[0], *(to for _, to in cuts)] if order else []
    block_of: dict[str, int] = {}
    for name in order:  # a block's NFs are fed from within it, but its first; every entry is in the first block
        feeders = [source for source, to, _ in edges if to == name and (source, to) not in cuts]
        block_of[name] = starts.index(name) if name in starts else block_of[feeders[0]] if feeders else 0
    return [[name for name in order if block_of[name] == k] for k in range(len(starts))]


def _connected(start: str, edges: list[Edge]) -> set[str]:
    """The NFs joined to `start` by `edges`, whichever way each edge points."""
    seen, frontier = {start}, [start]
    while frontier:
        name = frontier.pop()
        for source, to, _ in edges:
            for near, far in ((source, to), (to, source)):
                if near == name and far not in seen:
                    seen.add(far)
                    frontier.append(far)
    return seen
