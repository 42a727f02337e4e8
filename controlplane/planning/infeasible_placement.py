"""Why no placement satisfies the constraints, in words that name the constraint and the numbers: what placement.py
says when the program is infeasible."""

from __future__ import annotations

from controlplane.planning.placement_program import nodes_of


def capacity(cores: list[int], room: dict[int, float]) -> float:
    """The cores' capacity for these NFs, in cores: a new core's whole, a core in use its room."""
    return sum(room.get(core, 1.0) for core in cores)


def why_infeasible(nfs: list, cores: list[int], cheapest, serve_offered: bool, room, together, node_of, pinned) -> str:
    """The first constraint the NFs (placement.PlacedNf) break on `cores`, and by how much: the cores' capacity, a
    graph block no node holds, the work pinned to a node, or the largest NF."""

    def need(nf) -> float:
        return (nf.rate_pps or 0) * nf.share * cheapest(nf)

    total = sum(need(nf) for nf in nfs)
    offered = capacity(cores, room)
    if serve_offered and total > offered:
        return (
            f"infeasible placement: serving every chain's offered rate needs {total:.2f} cores of NF work but the core "
            f"capacity constraint allows {offered:g} (cores {cores}); lower the rates or add cores"
        )
    nodes = nodes_of(cores, node_of)
    by_name = {nf.name: nf for nf in nfs}
    if len(nodes) > 1 and together:
        largest = max(together, key=lambda group: sum(need(by_name[name]) for name in group))
        most = max(capacity(members, room) for members in nodes.values())
        if (needed := sum(need(by_name[name]) for name in largest)) > most:
            return (
                f"infeasible placement: NFs {', '.join(largest)} of a graph go on one node (a wire between nodes "
                f"carries one edge between an NF that sends nothing else and one that nothing else feeds, and none "
                f"parts them) and need {needed:.2f} cores of NF work, but a node offers at most {most:g} (graph "
                "block constraint); lower the rate, or give the graph such an edge"
            )
    for node in sorted(set(pinned.values())):
        on_node = [nf for nf in nfs if pinned.get(nf.name) == node]
        offered = capacity([core for core in cores if node_of.get(core, "") == node], room)
        if (needed := sum(need(nf) for nf in on_node)) > offered:
            return (
                f"infeasible placement: NFs {', '.join(nf.name for nf in on_node)} go on node {node} (their chains' "
                f"ports are there) and need {needed:.2f} cores of NF work, but it offers {offered:g} (pinned NF "
                "constraint); lower the rates, or give the node cores"
            )
    biggest = max(nfs, key=need)
    return (
        f"infeasible placement: NF {biggest.name} alone needs {need(biggest):.2f} of a core "
        "at its chain's offered rate "
        f"(core capacity constraint), or the chains do not fit the cores whole (chain integrity constraint)"
    )
