"""Where a chain's graph may be cut between nodes: only at an edge that is the one way from the NFs before it to
those after it, from an NF that sends nothing else to one that nothing else feeds, every entry before it and every
exit after it; the NFs between such edges are blocks that stay on one node."""

from __future__ import annotations

import yaml

from conftest import REPO
from controlplane.planning.graph_cuts import blocks, cut_edges
from controlplane.spec.chain_graph import Edge, topological_order


def edges_of(*edges: tuple[str, str, str | None]) -> list[Edge]:
    """(from, to, label) as the spec's edges."""
    return [Edge(*edge, "") for edge in edges]


def graph_of(example: str) -> tuple[list[str], list[Edge]]:
    graph = yaml.safe_load((REPO / "examples" / example).read_text())["chains"][0]["graph"]
    edges = edges_of(*((edge["from"], edge["to"], edge.get("label")) for edge in graph["edges"]))
    return [nf["name"] for nf in graph["nodes"]], edges


def test_a_line_may_be_cut_at_every_edge():
    edges = edges_of(("a", "b", None), ("b", "c", None))
    assert cut_edges(["a", "b", "c"], edges) == [("a", "b"), ("b", "c")]
    assert blocks(["a", "b", "c"], edges) == [["a"], ["b"], ["c"]]


def test_a_classifiers_ways_and_a_parallel_groups_branches_are_never_parted():
    # http-graph: the classifier's two ways join at the forwarder; parallel-graph: three branches join there.
    for example in ("http-graph.yaml", "parallel-graph.yaml"):
        names, edges = graph_of(example)
        assert cut_edges(names, edges) == []
        assert blocks(names, edges) == [topological_order(names, edges)]


def test_a_graph_is_cut_only_between_its_series_parts_in_chain_order():
    # Given out of order: a forks to b and c, which join at d; d feeds e, e feeds f.
    names = ["f", "d", "b", "a", "e", "c"]
    edges = edges_of(
        ("e", "f", None), ("a", "b", None), ("d", "e", None), ("a", "c", None), ("b", "d", None), ("c", "d", None)
    )
    assert cut_edges(names, edges) == [("d", "e"), ("e", "f")]
    assert blocks(names, edges) == [["a", "b", "c", "d"], ["e"], ["f"]]


def test_a_labelled_edge_an_exit_before_or_an_entry_after_keeps_the_cut_away():
    # A classifier's one labelled way: its other gate's packets have no edge, so the NF is not one a wire ends.
    assert cut_edges(["a", "b"], edges_of(("a", "b", "http"))) == []
    # a's web way ends at x, an exit of the chain: cut at b -> c, x's packets would have no way to the chain's end.
    names = ["a", "x", "b", "c"]
    edges = edges_of(("a", "x", "web"), ("a", "b", "other"), ("b", "c", None))
    assert cut_edges(names, edges) == []
    # Two entries feed m: both are before m's edge to n, which may be cut; r2 -> m may not (m is fed twice).
    names = ["r1", "r2", "m", "n"]
    edges = edges_of(("r1", "m", None), ("r2", "m", None), ("m", "n", None))
    assert cut_edges(names, edges) == [("m", "n")]
    assert blocks(names, edges) == [["r1", "r2", "m"], ["n"]]
