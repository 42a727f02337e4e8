"""A ServiceChain's ports on its nodes: a chain's first NF runs where its `from` port is and its last where its `to`
port is (cut across nodes when they differ), each port goes to its node's agent as a net_af_packet port under a name
of the resource's addition there, and what cannot hold is refused naming the port, the NF or the node."""

from __future__ import annotations

import copy

import pytest
from kubernetes.test_cluster_placement import COSTS_OF, HZ, chain, node, per_packet_mpps

from controlplane.kubernetes.agent_names import agent_prefix
from controlplane.kubernetes.chain_cut import wire_prefix
from controlplane.kubernetes.chain_hops import ring_hops
from controlplane.kubernetes.chain_ports import next_port_life
from controlplane.kubernetes.cluster_placement import place
from controlplane.kubernetes.live_arguments import arguments_changes
from controlplane.kubernetes.service_chain import ServiceChainSpec
from controlplane.kubernetes.tandem_nodes import tandem_node
from controlplane.launch.control_api import Status
from controlplane.planning.placement import PlacementError
from controlplane.spec.loading import spec_from_document

# "lo": an interface every machine has, so that the agents' entries check out here as a spec's.
PORTS = [
    {"name": "client", "node": "a", "interface": "lo"},
    {"name": "server", "node": "b", "interface": "lo", "unhandled": "drop"},
]


def nodes(*names: str, ready=True):
    return [tandem_node(node(name, address=f"10.0.0.{i + 1}", ready=ready)) for i, name in enumerate(names)]


def lab_chain(name: str, source: str, to: str, rate: str, nfs=("fw", "count")) -> dict:
    return chain(name, rate, nfs) | {"from": source, "to": to}


def spec(*chains: dict, ports=PORTS) -> ServiceChainSpec:
    return ServiceChainSpec.model_validate({"chains": list(chains), "ports": ports})


def test_a_chain_between_ports_on_two_nodes_starts_on_the_first_and_ends_on_the_second():
    # Light NFs: the whole chain would fit either node; its ports put its ends on a and b.
    to_server = lab_chain("up", "client", "server", per_packet_mpps(0.1))
    to_client = lab_chain("down", "server", "client", per_packet_mpps(0.1))
    placed = place("lab", spec(to_server, to_client), nodes("a", "b"))
    assert placed.where["up-fw"][0] == "a" and placed.where["up-count"][0] == "b"
    assert placed.where["down-fw"][0] == "b" and placed.where["down-count"][0] == "a"
    assert placed.split == ["up", "down"] and len(placed.wires) == 2
    names = placed.port_names
    assert names == {"client": f"{wire_prefix('lab')}0-pclient", "server": f"{wire_prefix('lab')}0-pserver"}
    for part_list in placed.cut_parts:
        (_, first), (_, last) = part_list
        assert "traffic" not in first and "traffic" not in last  # fed by a port: its rate was placement's only
    (_, up_first), (_, up_last) = placed.cut_parts[0]
    assert up_first["from"] == names["client"] and up_last["to"] == names["server"]
    assert up_first["to"] == placed.wires[0].name == up_last["from"]
    # Each node's agent adds its port (before the wires'), a net_af_packet device on the interface.
    for on, port in (("a", "client"), ("b", "server")):
        entry = placed.ports_by_node[on][0]
        assert entry["name"] == names[port] and len(entry["name"]) <= 32
        assert entry["device"].startswith("net_af_packet_p") and ",iface=lo," in entry["device"]
        assert entry["unhandled"] == ("drop" if port == "server" else "pass")
        # What the agent is asked for checks out as a spec's ports and chains (on this machine's core 1).
        parts = [part for parts in placed.cut_parts for on_node, part in parts if on_node == on]
        here = [part | {"nfs": [nf | {"core": 1} for nf in part["nfs"]]} for part in parts]
        ports = placed.ports_by_node[on]
        assert spec_from_document({"name": "agent", "ports": ports, "chains": here}, f"node {on}").chains


def test_a_chain_whose_ports_are_on_one_node_runs_there_even_where_another_is_cheaper():
    cheap = tandem_node(node("a", address="10.0.0.1", hz=4 * HZ))  # the same cycles take a quarter of the time
    ports = [{"name": "in", "node": "b", "interface": "lo"}, {"name": "out", "node": "b", "interface": "lo"}]
    placed = place("lab", spec(lab_chain("c", "in", "out", per_packet_mpps(0.2)), ports=ports), [cheap, *nodes("b")])
    assert {where[0] for where in placed.where.values()} == {"b"} and not placed.split
    [entry] = placed.chains_by_node["b"]
    assert (entry["from"], entry["to"]) == (placed.port_names["in"], placed.port_names["out"])
    assert [port["name"] for port in placed.ports_by_node["b"]] == [placed.port_names["in"], placed.port_names["out"]]
    # Without ports the cheaper node takes it.
    plain = place("lab", spec(chain("c", per_packet_mpps(0.2)), ports=[]), [cheap, *nodes("b")])
    assert {where[0] for where in plain.where.values()} == {"a"}


def test_what_ports_cannot_give_is_refused_naming_the_port_nf_or_node():
    one_nf = lab_chain("c", "client", "server", per_packet_mpps(0.1), nfs=("fw",))
    with pytest.raises(PlacementError, match="NF c-fw would run on node a .port client. and on node b"):
        place("lab", spec(one_nf), nodes("a", "b"))
    with pytest.raises(PlacementError, match="port server is on node b, which is no ready Tandem node"):
        place("lab", spec(lab_chain("c", "client", "server", per_packet_mpps(0.1))), nodes("a"))
    # Three chains from the client's port, each NF 80 % of a core: the four cores would carry them, the client's
    # node's two do not, and the constraint is named.
    heavy = [chain(f"c{k}", per_packet_mpps(0.8), ("fw",)) | {"from": "client"} for k in range(3)]
    with pytest.raises(PlacementError, match="go on node a .their chains' ports are there.*pinned NF constraint"):
        place("lab", spec(*heavy), nodes("a", "b"))


@pytest.mark.parametrize(
    "change, says",
    [
        ({"chains": [lab_chain("c", "nowhere", "server", "1 kpps")]}, "chain c's from names port 'nowhere'"),
        ({"ports": [PORTS[0], PORTS[0]]}, "port 'client' is given twice"),
        ({"ports": [PORTS[0] | {"name": "a" * 15}]}, "at most 14 characters"),
        ({"ports": [PORTS[0] | {"interface": "x" * 16}]}, "at most 15 characters"),
    ],
)
def test_a_resource_whose_ports_do_not_hold_is_refused_naming_them(change, says):
    document = {"chains": [lab_chain("c", "client", "server", "1 kpps")], "ports": PORTS} | change
    with pytest.raises(ValueError, match=says):
        ServiceChainSpec.model_validate(document)


def test_a_life_names_its_ports_anew_and_an_arguments_change_keeps_them():
    resource = spec(lab_chain("c", "client", "server", per_packet_mpps(0.1)))
    running = place("lab", resource, nodes("a", "b"))
    running.named_for_life("lab", 3)
    assert running.port_names["client"] == f"{wire_prefix('lab')}3-pclient"
    (_, first), (_, last) = running.cut_parts[0]
    assert first["from"] == running.port_names["client"] and last["to"] == running.port_names["server"]
    assert first["name"].startswith(agent_prefix("lab", 3))
    assert [p["name"] for p in running.ports_by_node["a"]][0] == running.port_names["client"]
    assert sum(p["name"].endswith("-pclient") for ports in running.ports_by_node.values() for p in ports) == 1
    # The next life comes after every one whose ports an agent keeps (an addition refused half-way leaves them).
    kept = [running.port_names["client"], running.wires[0].name, f"{wire_prefix('other')}7-pclient"]
    assert next_port_life("lab", kept) == 4 and next_port_life("lab", [running.wires[0].name]) == 0
    # On one node, a firewall's rules changed: the same ports and names, a live change of its arguments.
    ports = [PORTS[0], PORTS[1] | {"node": "a"}]
    whole = lab_chain("c", "client", "server", per_packet_mpps(0.1))
    before = place("lab", spec(whole, ports=ports), nodes("a", "b"))
    changed = copy.deepcopy(whole)
    changed["nfs"][0]["args"] = {"synthetic_rules": 20}
    # (Its costs with those rules measured too.)
    measured = [tandem_node(node(n, costs=[*COSTS_OF, {**COSTS_OF[0], "args": {"synthetic_rules": 20}}])) for n in "ab"]
    after = place("lab", spec(changed, ports=ports), measured)
    assert [change.nf for change in arguments_changes(before, after)] == ["lab.c-fw"]
    moved = place("lab", spec(whole, ports=[PORTS[0], ports[1] | {"interface": "eth9"}]), nodes("a", "b"))
    assert arguments_changes(before, moved) is None  # another interface: the chains are added anew


def test_the_status_shows_a_chain_fed_by_a_port_from_that_port():
    placed = place("lab", spec(lab_chain("c", "client", "server", per_packet_mpps(0.1))), nodes("a", "b"))
    (on, first), _ = placed.cut_parts[0]
    nf = {"name": "lab.c-fw", "chain": first["name"], "packets_in": 1, "packets_dropped": 0, "in_mpps": 0.5}
    status = Status.model_validate(
        {"name": on, "scheduler": "coop", "phase": "measure", "t_s": 1.0, "chains": [], "nfs": [nf]}
    )
    [hop] = ring_hops(on, first, status, agent_prefix("lab"))
    assert (hop["from"], hop["to"], hop["node"]) == ("client", "c-fw", "a")
