"""What the operator decides before it talks to any agent: a Node's Tandem annotations read (or refused, naming the
annotation), and a ServiceChain placed over the ready nodes' free cores at each node's own costs, each node's share
turned into chains its agent can add under names no other resource's chain takes."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import REPO
from controlplane.kubernetes.agent_names import agent_name
from controlplane.kubernetes.chain_cut import wire_prefix
from controlplane.kubernetes.chain_hops import hops_of, ring_hops, wire_hop
from controlplane.kubernetes.cluster_placement import CostsUnknown, chains_of, place
from controlplane.kubernetes.reconciler import Reconciler
from controlplane.kubernetes.service_chain import HopStatus, ServiceChainSpec
from controlplane.kubernetes.tandem_nodes import (
    CONTROL,
    CORES,
    COSTS,
    TSC_HZ,
    NodeReportError,
    annotations,
    tandem_node,
)
from controlplane.launch.control_api import Status
from controlplane.planning.placement import PlacementError
from controlplane.spec.loading import spec_from_document

HZ = 2.0e9
CHEAP = {"k_cycles": 100.0, "c_cycles": 1000.0}
COSTS_OF = [
    {"type": "firewall", "args": {"synthetic_rules": 10}, **CHEAP},
    {"type": "counter", "args": {}, **CHEAP},
    {"type": "ttl", "args": {}, **CHEAP},
]


def node(name: str, cores=(1, 2), costs=COSTS_OF, hz=HZ, ready=True, address="10.0.0.1") -> dict:
    return {
        "metadata": {"name": name, "annotations": annotations(f"{address}:7100", list(cores), hz, costs)},
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


def test_a_chain_larger_than_a_node_is_cut_into_parts_joined_by_a_wire():
    # Each NF takes 60 % of a core: three of them need three cores, and each node has two.
    nodes = [tandem_node(node("a", address="10.0.0.1")), tandem_node(node("b", address="10.0.0.2"))]
    used = {7}  # another resource's wire
    placed = place("big", spec(chain("c1", per_packet_mpps(0.6))), nodes, vnis_in_use=used)
    assert placed.split == ["c1"] and placed.nodes() == {"a", "b"}
    assert len(placed.edges_between_nodes) == 1  # fewest packets between nodes: one edge crosses
    assert placed.chains_by_node == {}  # no whole chain: the parts are the agents' chains
    [parts], [wire] = placed.cut_parts, placed.wires
    assert [on for on, _ in parts] == [wire.sender, wire.receiver] and wire.vni in used and wire.vni != 7
    (sender, first), (receiver, second) = parts
    assert (first["name"], second["name"]) == ("big.c1.0", "big.c1.1")
    assert [nf["name"] for _, part in parts for nf in part["nfs"]] == ["big.c1-fw", "big.c1-count", "big.c1-ttl"]
    assert first["to"] == wire.name == second["from"] and first["traffic"] and "traffic" not in second
    address = {"a": "10.0.0.1", "b": "10.0.0.2"}
    for on, part, peer in ((sender, first, receiver), (receiver, second, sender)):
        [port] = placed.ports_by_node[on]
        assert port == {"name": wire.name, "vxlan": {"vni": wire.vni, "local": address[on], "remote": address[peer]}}
        # What the node's agent is asked for is a spec's ports and chains entries that check out (spec_from_document
        # raises naming the field), here on this machine's NF core (the node's cores are its own).
        here = part | {"nfs": [nf | {"core": 1} for nf in part["nfs"]]}
        assert spec_from_document({"name": "agent", "ports": [port], "chains": [here]}, f"node {on}").chains
    # Placed again, the wire's port gets a name of its own: a removed port's name stays taken on its agent.
    again = place("big", spec(chain("c1", per_packet_mpps(0.6))), nodes, vnis_in_use=used)
    assert again.wires[0].name != wire.name and again.wires[0].name.startswith(wire_prefix("big"))


def graph(name: str, rate: str, nodes: dict[str, str], edges: list[tuple[str, str]]) -> dict:
    """A graph chain: NFs by name and type (firewall, counter or ttl), unlabelled edges."""
    args = {"firewall": {"synthetic_rules": 10}}
    return {
        "name": name,
        "traffic": {"rate": rate},
        "graph": {
            "nodes": [{"name": nf, "type": kind, "args": args.get(kind, {})} for nf, kind in nodes.items()],
            "edges": [{"from": a, "to": b} for a, b in edges],
        },
    }


def test_a_graph_larger_than_a_node_is_cut_where_a_wire_carries_one_edge():
    # g-a forks to g-b and g-c, which join at g-d; then g-e, g-f. Each NF takes 45 % of a core: the fork's four NFs
    # fill a node's two cores, and a wire may carry only d -> e or e -> f (graph_cuts.py).
    nodes = [tandem_node(node("a", address="10.0.0.1")), tandem_node(node("b", address="10.0.0.2"))]
    kinds = {"g-a": "firewall", "g-b": "counter", "g-c": "counter", "g-d": "ttl", "g-e": "firewall", "g-f": "ttl"}
    edges = [("g-a", "g-b"), ("g-a", "g-c"), ("g-b", "g-d"), ("g-c", "g-d"), ("g-d", "g-e"), ("g-e", "g-f")]
    placed = place("big", spec(graph("g", per_packet_mpps(0.45), kinds, edges)), nodes)
    assert placed.split == ["g"] and placed.edges_between_nodes == [("g-d", "g-e")]
    [[(sender, fork), (receiver, tail)]], [wire] = placed.cut_parts, placed.wires
    assert (wire.sender, wire.receiver, wire.source_nf, wire.target_nf) == (sender, receiver, "g-d", "g-e")
    # The fork stays a graph, its edges its own; the tail, a line, is given as one.
    assert [nf["name"] for nf in fork["graph"]["nodes"]] == [f"big.g-{n}" for n in "abcd"]
    assert [(e["from"], e["to"]) for e in fork["graph"]["edges"]] == [(f"big.{a}", f"big.{b}") for a, b in edges[:4]]
    assert [nf["name"] for nf in tail["nfs"]] == ["big.g-e", "big.g-f"] and "graph" not in tail
    assert fork["to"] == wire.name == tail["from"] and fork["traffic"] and "traffic" not in tail
    # Each checks out as a spec's chain on its node's agent (here on this machine's NF core).
    for on, part in ((sender, fork), (receiver, tail)):
        here = copy.deepcopy(part)
        for nf in here["graph"]["nodes"] if "graph" in here else here["nfs"]:
            nf["core"] = 1
        assert spec_from_document({"name": "agent", "ports": placed.ports_by_node[on], "chains": [here]}, on).chains


def test_a_graph_that_no_edge_a_wire_carries_parts_and_that_no_node_holds_is_refused_saying_why():
    # A fork whose branches join: no edge a wire may carry, and four NFs at 60 % of a core need more than a node.
    kinds = {"g-a": "firewall", "g-b": "counter", "g-c": "counter", "g-d": "ttl"}
    edges = [("g-a", "g-b"), ("g-a", "g-c"), ("g-b", "g-d"), ("g-c", "g-d")]
    nodes = [tandem_node(node("a", address="10.0.0.1")), tandem_node(node("b", address="10.0.0.2"))]
    with pytest.raises(PlacementError, match="NFs g-a, g-b, g-c, g-d of a graph go on one node") as refused:
        place("big", spec(graph("g", per_packet_mpps(0.6), kinds, edges)), nodes)
    assert "graph block constraint" in str(refused.value)


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


def test_the_operator_plans_a_cut_chain_and_keeps_each_resources_wires_apart():
    """The reconciler in plan-only mode (no agent asked): a chain larger than a node is planned as parts joined by a
    wire, and a second such resource's wire never takes the first's VXLAN network."""
    reconciler = Reconciler(token=None, plan_only=True)
    for name, address in (("a", "10.0.0.1"), ("b", "10.0.0.2"), ("c", "10.0.0.3"), ("d", "10.0.0.4")):
        reconciler.node_seen(name, tandem_node(node(name, address=address)))
    big = spec(chain("c1", per_packet_mpps(0.6))).model_dump(by_alias=True, exclude_none=True)
    first = reconciler.apply("ns/one", "one", big, 1)
    second = reconciler.apply("ns/two", "two", big, 1)
    for outcome in (first, second):
        assert outcome.status["conditions"][0]["reason"] == "Planned", outcome.status
        assert "chains c1 cut into parts joined by wires" in outcome.status["conditions"][0]["message"]
    [one], [two] = reconciler.held["ns/one"].placement.wires, reconciler.held["ns/two"].placement.wires
    # What a placement of the second is kept from: the first's network (two VXLANs of one VNI on a node they share
    # would be refused by its kernel).
    assert reconciler.vnis(besides="ns/two") == {one.vni} and one.vni != two.vni


def test_a_cut_chains_wire_is_a_hop_with_its_rate_losses_and_delay_and_the_part_after_it_is_fed_from_it():
    reconciler = Reconciler(token=None, plan_only=True)
    for name, address in (("a", "10.0.0.1"), ("b", "10.0.0.2")):
        reconciler.node_seen(name, tandem_node(node(name, address=address)))
    reconciler.apply("ns/one", "one", spec(chain("c1", per_packet_mpps(0.6))).model_dump(by_alias=True), 1)
    placement = reconciler.held["ns/one"].placement
    [wire] = placement.wires
    [(sender_node, sending), (receiver_node, receiving)] = placement.cut_parts[0]
    assert (sender_node, receiver_node) == (wire.sender, wire.receiver)
    prefix = agent_name("one", "")

    def status(node: str, part: dict, wire_report: dict) -> Status:
        nfs = [{"name": nf["name"], "chain": part["name"], "packets_in": 1, "packets_dropped": 0, "in_mpps": 0.25}
               for nf in part["nfs"]]  # fmt: skip
        return Status.model_validate(
            {"name": node, "scheduler": "coop", "phase": "measure", "t_s": 1.0, "chains": [], "nfs": nfs,
             "drops_by_ring": {f"{part['name']}:entry": 3}, "ports": [{"name": wire.name, "wire": wire_report}]}
        )  # fmt: skip

    counts = {"sent": 0, "no_room": 2, "received": 0, "lost": 0}
    statuses = {
        sender_node: status(sender_node, sending, counts),
        receiver_node: status(receiver_node, receiving, {**counts, "no_room": 0, "received": 1_000, "lost": 5}),
    }
    readings: dict = {}
    # A rate needs two readings: the first says nothing of the wire.
    assert wire_hop(wire, statuses, readings, now=10.0) is None
    statuses[receiver_node].ports[0]["wire"] = {
        **counts, "no_room": 0, "received": 501_000, "lost": 7, "delay": {"mean_ns": 12_345.0}
    }  # fmt: skip
    hop = wire_hop(wire, statuses, readings, now=12.0)
    assert hop == {
        "from": sending["nfs"][-1]["name"].removeprefix(prefix),
        "to": receiving["nfs"][0]["name"].removeprefix(prefix),
        "node": "wire",
        "rateMpps": 0.25,  # 500,000 frames in 2 s
        "dropped": 7 + 2,  # the receiver's gaps and what the sender could not number
        "delayUs": 12.345,
    }
    HopStatus.model_validate(hop)  # as the CRD's status takes it
    # An end that does not answer: no wire hop rather than a made-up one.
    assert wire_hop(wire, {**statuses, sender_node: None}, readings, now=14.0) is None
    # On the receiving node the part's entry is the wire's port.
    [entry, *_] = ring_hops(receiver_node, receiving, statuses[receiver_node], prefix)
    assert entry["from"] == wire.name and entry["dropped"] == 3 and entry["node"] == receiver_node
