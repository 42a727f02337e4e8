"""What the operator decides before it talks to any agent: a Node's Tandem annotations read (or refused, naming the
annotation), and a ServiceChain placed over the ready nodes' free cores at each node's own costs, each node's share
turned into chains its agent can add under names no other resource's chain takes."""

from __future__ import annotations

import pytest
import yaml

from conftest import REPO
from controlplane.kubernetes.cluster_placement import CostsUnknown, chains_of, place
from controlplane.kubernetes.reconciler import hops_of
from controlplane.kubernetes.service_chain import ServiceChainSpec
from controlplane.kubernetes.tandem_nodes import (
    CONTROL,
    CORES,
    COSTS,
    TSC_HZ,
    NodeReportError,
    annotations,
    tandem_node,
)
from controlplane.planning.placement import PlacementError

HZ = 2.0e9
CHEAP = {"k_cycles": 100.0, "c_cycles": 1000.0}
COSTS_OF = [
    {"type": "firewall", "args": {"synthetic_rules": 10}, **CHEAP},
    {"type": "counter", "args": {}, **CHEAP},
    {"type": "ttl", "args": {}, **CHEAP},
]


def node(name: str, cores=(1, 2), costs=COSTS_OF, hz=HZ, ready=True) -> dict:
    return {
        "metadata": {"name": name, "annotations": annotations("10.0.0.1:7100", list(cores), hz, costs)},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def chain(name: str, rate: str, nfs=("fw", "count", "ttl")) -> dict:
    types = {"fw": ("firewall", {"synthetic_rules": 10}), "count": ("counter", {}), "ttl": ("ttl", {})}
    return {
        "name": name,
        "traffic": {"rate": rate},
        "nfs": [{"name": f"{name}-{nf}", "type": types[nf][0], "args": types[nf][1]} for nf in nfs],
    }


def spec(*chains: dict, placement: str = "fewest_cores") -> ServiceChainSpec:
    return ServiceChainSpec.model_validate({"placement": placement, "chains": list(chains)})


def per_packet_mpps(share_of_core: float) -> str:
    """A rate at which one NF of CHEAP costs takes `share_of_core` of a core (batches of 32 packets)."""
    seconds = (CHEAP["k_cycles"] + CHEAP["c_cycles"] / 32) / HZ
    return f"{share_of_core / seconds / 1e6:.6f} Mpps"


def test_a_node_is_read_from_its_annotations():
    read = tandem_node(node("a", cores=(1, 3)))
    assert read.name == "a" and read.control == ("10.0.0.1", 7100) and read.cores == (1, 3) and read.tsc_hz == HZ
    assert read.ready and len(read.costs) == 3
    assert not tandem_node(node("b", ready=False)).ready


@pytest.mark.parametrize(
    "key, value, says",
    [
        (CONTROL, "10.0.0.1", "is not HOST:PORT"),
        (CONTROL, "10.0.0.1:99999", "is not HOST:PORT"),
        (CORES, "1,x", "comma-separated list of core numbers"),
        (CORES, "1,1", "distinct cores"),
        (TSC_HZ, "fast", "is not a number"),
        (TSC_HZ, "0", "above 0"),
        (COSTS, "{", "not JSON"),
        (COSTS, '[{"type": "counter"}]', "entry 0: give type, args"),
        (COSTS, '[{"type": "counter", "k_cycles": -1, "c_cycles": 0}]', "k_cycles above 0"),
        (TSC_HZ, None, "missing"),
    ],
)
def test_a_wrong_annotation_is_refused_naming_node_and_annotation(key, value, says):
    wrong = node("n1")
    if value is None:
        del wrong["metadata"]["annotations"][key]
    else:
        wrong["metadata"]["annotations"][key] = value
    with pytest.raises(NodeReportError) as refused:
        tandem_node(wrong)
    assert f"node n1: annotation {key}: " in str(refused.value) and says in str(refused.value)


def test_chains_that_fit_one_node_stay_on_it_and_go_to_its_agent_under_the_resources_name():
    nodes = [tandem_node(node("a")), tandem_node(node("b"))]
    placed = place("edge", spec(chain("c1", per_packet_mpps(0.1)), chain("c2", per_packet_mpps(0.1))), nodes)
    assert placed.split == [] and placed.nodes() == {"a"}
    assert {core for _, core in placed.where.values()} == {1}  # six NFs at 10 % of a core each: one core
    [added_c1, added_c2] = placed.chains_by_node["a"]
    assert added_c1["name"] == "edge.c1" and [nf["name"] for nf in added_c1["nfs"]] == [
        "edge.c1-fw",
        "edge.c1-count",
        "edge.c1-ttl",
    ]
    assert all(nf["core"] == 1 for nf in added_c1["nfs"]) and added_c2["name"] == "edge.c2"


def test_a_chain_joins_cores_other_resources_use_where_they_have_room_and_nodes_not_ready_are_not_used():
    nodes = [tandem_node(node("a")), tandem_node(node("b")), tandem_node(node("c", ready=False))]
    # Node a's cores are 90 % used by other resources: the chain (three NFs at 20 % of a core each) goes to b's
    # new cores, all on one of them.
    placed = place("edge", spec(chain("c1", per_packet_mpps(0.2))), nodes, load={"a": {1: 0.9, 2: 0.9}})
    assert placed.nodes() == {"b"} and len({core for _, core in placed.where.values()}) == 1
    assert sum(placed.load().values()) == pytest.approx(0.6, rel=1e-3)
    # With 70 % of a's core 1 left, it fits there, beside them: no new core at all.
    placed = place("edge", spec(chain("c1", per_packet_mpps(0.2))), nodes, load={"a": {1: 0.3, 2: 0.9}})
    assert set(placed.where.values()) == {("a", 1)} and placed.solution["objective"] < 1
    with pytest.raises(PlacementError, match="no core with room on a ready Tandem node"):
        place("edge", spec(chain("c1", per_packet_mpps(0.2))), nodes, load={n: {1: 1.0, 2: 0.99} for n in "ab"})


def test_a_chain_larger_than_a_node_spans_two_and_is_reported_split():
    # Each NF takes 60 % of a core: three of them need three cores, and each node has two.
    nodes = [tandem_node(node("a")), tandem_node(node("b"))]
    placed = place("big", spec(chain("c1", per_packet_mpps(0.6))), nodes)
    assert placed.split == ["c1"] and placed.nodes() == {"a", "b"}
    assert len(placed.edges_between_nodes) == 1  # fewest packets between nodes: one edge crosses
    assert "a" not in placed.chains_by_node and "b" not in placed.chains_by_node


def test_a_node_that_counts_more_cycles_is_charged_them():
    # Node a's cycles cost four times node b's for the same NFs: the chain that fits b's one core goes there.
    dear = [dict(entry, k_cycles=400.0) for entry in COSTS_OF]
    nodes = [tandem_node(node("a", cores=(1,), costs=dear)), tandem_node(node("b", cores=(1,)))]
    placed = place("edge", spec(chain("c1", per_packet_mpps(0.3))), nodes)
    assert placed.nodes() == {"b"}


def test_an_nf_no_node_measured_is_refused_naming_it():
    nodes = [tandem_node(node("a", costs=COSTS_OF[:2]))]
    with pytest.raises(CostsUnknown, match=r"NF c1-ttl \(type ttl"):
        place("edge", spec(chain("c1", "10 kpps")), nodes)


def test_an_sfc_request_is_composed_into_chains_for_the_agents():
    resource = yaml.safe_load((REPO / "deploy/kubernetes/examples/web-sfc.yaml").read_text())
    composed = chains_of("web-sfc", ServiceChainSpec.model_validate(resource["spec"]))
    [only] = composed
    assert only["graph"]["nodes"] and only["traffic"]["rate"] == 200_000  # the resource's traffic, given it
    measured = [{"type": nf["type"], "args": nf.get("args", {}), **CHEAP} for nf in only["graph"]["nodes"]]
    placed = place(
        "web-sfc", ServiceChainSpec.model_validate(resource["spec"]), [tandem_node(node("a", costs=measured))]
    )
    [added] = placed.chains_by_node["a"]
    names = {nf["name"] for nf in added["graph"]["nodes"]}
    assert all(name.startswith("web-sfc.") for name in names)
    assert all(edge["from"] in names and edge["to"] in names for edge in added["graph"]["edges"])


def test_the_hops_written_in_the_status_follow_a_lines_rings_and_a_graphs_edges():
    placed = place("edge", spec(chain("c1", "10 kpps")), [tandem_node(node("a"))])
    [line] = placed.chains_by_node["a"]
    assert hops_of(line) == [
        ("entry", "edge.c1-fw"),
        ("edge.c1-fw", "edge.c1-count"),
        ("edge.c1-count", "edge.c1-ttl"),
    ]
    resource = yaml.safe_load((REPO / "deploy/kubernetes/examples/web-sfc.yaml").read_text())
    [graph] = chains_of("web-sfc", ServiceChainSpec.model_validate(resource["spec"]))
    hops = hops_of(graph)
    edges = [(edge["from"], edge["to"]) for edge in graph["graph"]["edges"]]
    assert hops[len(hops) - len(edges) :] == edges
    entered = [to for source, to in hops if source == "entry"]
    assert entered and not set(entered) & {to for _, to in edges}  # the entry feeds what no edge feeds
    assert {to for _, to in hops} == {nf["name"] for nf in graph["graph"]["nodes"]}  # every NF is reached
