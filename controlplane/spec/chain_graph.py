"""A chain's graph: its edges as the spec gives them (a list is a line), their checks, and a topological order."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str | None
    where: str  # the spec path of the edge, for messages: "chains[0].graph.edges[1]"


def line_edges(names: list[str], where: str) -> list[Edge]:
    """The edges of a chain given as a list: each NF feeds the next."""
    return [Edge(a, b, None, f"{where}.nfs[{i + 1}]") for i, (a, b) in enumerate(zip(names, names[1:], strict=False))]


def graph_problems(names: list[str], edges: list[Edge], where: str) -> list[tuple[str, str]]:
    """What makes `edges` over the nodes `names` not a chain Tandem runs: unknown nodes, repeated edges, cycles, more
    than one entry, nodes the entry does not reach, half-labelled fan-outs, and parallel groups of the wrong shape.
    (Whether the labels are the node's gates is checked against its type by the data plane's catalog.)"""
    problems: list[tuple[str, str]] = []
    known = set(names)
    usable: list[Edge] = []
    seen_pairs: set[tuple[str, str]] = set()
    for edge in edges:
        bad = False
        for field, name in (("from", edge.source), ("to", edge.target)):
            if name not in known:
                problems.append((f"{edge.where}.{field}", f"unknown node {name!r} (nodes: {', '.join(names)})"))
                bad = True
        if bad:
            continue
        if edge.source == edge.target:
            problems.append((edge.where, f"an edge from {edge.source!r} to itself closes a cycle"))
        elif (edge.source, edge.target) in seen_pairs:
            problems.append((edge.where, f"a second edge from {edge.source!r} to {edge.target!r}"))
        else:
            seen_pairs.add((edge.source, edge.target))
            usable.append(edge)
    problems += _fan_out_problems(usable)
    out: dict[str, list[Edge]] = {name: [] for name in names}
    into: dict[str, list[Edge]] = {name: [] for name in names}
    for edge in usable:
        out[edge.source].append(edge)
        into[edge.target].append(edge)
    cycle = _edge_closing_a_cycle(names, out)
    if cycle is not None:
        edge, path = cycle
        problems.append((edge.where, f"closes a cycle: {' -> '.join(path)}"))
        return problems  # entries and reachability mean little in a cyclic graph
    entries = [name for name in names if not into[name]]
    for name in entries[1:]:
        problems.append(
            (
                _node_where(where, names, name),
                f"node {name!r} has no edge in, and neither has {entries[0]!r}: a chain has "
                "one entry node, fed by the traffic generator",
            )
        )
    reached = _reachable(entries[0], out) if entries else set()
    for name in names:
        if name not in reached and name not in entries:
            problems.append(
                (_node_where(where, names, name), f"node {name!r} cannot be reached from the entry {entries[0]!r}")
            )
    for fork in parallel_forks(out):
        problems += _parallel_group_problems(fork, out, into, names, where)
    return problems


def parallel_forks(out: dict[str, list[Edge]]) -> list[str]:
    """The nodes that start a parallel group: several edges out, none labelled (`out`: each node's edges out)."""
    return [node for node, edges in out.items() if len(edges) > 1 and all(edge.label is None for edge in edges)]


def _parallel_group_problems(
    fork: str, out: dict[str, list[Edge]], into: dict[str, list[Edge]], names: list[str], where: str
) -> list[tuple[str, str]]:
    """Several unlabelled edges out of `fork` make a parallel group (μNF): every branch gets every packet at once.
    Each branch is a line of at least one NF (one edge in, one unlabelled edge out), and all re-join at one node
    (which may take other edges too: a way around the group). (Whether the branches' NFs may run in parallel is the
    catalog's to say: it knows what each type reads, writes and drops.)"""
    problems, joins = [], set()
    for edge in out[fork]:
        node = edge.target
        if len(into[node]) > 1:
            problems.append(
                (
                    edge.where,
                    f"a branch of the parallel group after {fork!r} needs at least one NF; this edge goes "
                    f"straight to {node!r}, which other edges enter too",
                )
            )
            continue
        while True:
            leaving = out[node]
            if len(leaving) != 1 or leaving[0].label is not None:
                problems.append(
                    (
                        _node_where(where, names, node),
                        f"node {node!r} is in a branch of the parallel group after {fork!r}: "
                        "a branch is a line of NFs (one edge out, unlabelled) up to the join",
                    )
                )
                break
            following = leaving[0].target
            if len(into[following]) > 1:
                joins.add(following)
                break
            node = following
    if len(joins) > 1:
        problems.append(
            (
                _node_where(where, names, fork),
                f"the branches after {fork!r} meet at {', '.join(sorted(joins))}: a parallel "
                "group re-joins at one node",
            )
        )
    return problems


def _node_where(where: str, names: list[str], name: str) -> str:
    return f"{where}.graph.nodes[{names.index(name)}]"


def _fan_out_problems(edges: list[Edge]) -> list[tuple[str, str]]:
    """Out of one node: unlabelled edges (one, or a parallel group's branches), or labelled edges with distinct labels
    (a labelled fan-out), not both."""
    problems = []
    by_source: dict[str, list[Edge]] = {}
    for edge in edges:
        by_source.setdefault(edge.source, []).append(edge)
    for source, out in by_source.items():
        labelled = [edge for edge in out if edge.label is not None]
        if labelled and len(labelled) < len(out):
            for edge in out:
                if edge.label is None:
                    problems.append(
                        (
                            f"{edge.where}",
                            f"the other edges out of {source!r} are labelled (a labelled fan-out): "
                            "label this one too, with one of its gates",
                        )
                    )
        labels: dict[str, Edge] = {}
        for edge in labelled:
            if edge.label in labels:
                problems.append((f"{edge.where}.label", f"a second edge out of {source!r} labelled {edge.label!r}"))
            labels.setdefault(edge.label, edge)
    return problems


def _edge_closing_a_cycle(names: list[str], out: dict[str, list[Edge]]) -> tuple[Edge, list[str]] | None:
    """An edge that closes a cycle, with the cycle's nodes, or None (depth-first, iterative)."""
    state = {name: 0 for name in names}  # 0 unvisited, 1 on the current path, 2 done
    for start in names:
        if state[start]:
            continue
        path, stack = [start], [iter(out[start])]
        state[start] = 1
        while stack:
            edge = next(stack[-1], None)
            if edge is None:
                state[path.pop()] = 2
                stack.pop()
            elif state[edge.target] == 1:
                return edge, path[path.index(edge.target) :] + [edge.target]
            elif state[edge.target] == 0:
                state[edge.target] = 1
                path.append(edge.target)
                stack.append(iter(out[edge.target]))
    return None


def _reachable(start: str, out: dict[str, list[Edge]]) -> set[str]:
    reached, todo = {start}, [start]
    while todo:
        for edge in out[todo.pop()]:
            if edge.target not in reached:
                reached.add(edge.target)
                todo.append(edge.target)
    return reached


def topological_order(names: list[str], edges: list[Edge]) -> list[str]:
    """The nodes so that every edge goes forward, ties in the spec's order (a line keeps its order)."""
    into = {name: 0 for name in names}
    out: dict[str, list[str]] = {name: [] for name in names}
    for edge in edges:
        into[edge.target] += 1
        out[edge.source].append(edge.target)
    order, ready = [], [name for name in names if into[name] == 0]
    while ready:
        name = min(ready, key=names.index)
        ready.remove(name)
        order.append(name)
        for target in out[name]:
            into[target] -= 1
            if into[target] == 0:
                ready.append(target)
    return order
