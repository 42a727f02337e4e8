"""ServiceChains on two real nodes' agents (bench/node_hosts.py: two hosts on a LAN, each agent in namespaces of its
own, node-a's NFs on core 1 and node-b's on core 0), placed by the operator at the agents' own measured costs:
- a chain larger than a node is cut into a part on each node joined by a wire; both agents add their part and the
  wire's port, the generator's packets cross the VXLAN, the status shows the wire's hop;
- a small chain's node lost (its agent killed, every process of it with it) moves the chain to the other node, and
  the cut chain waits; the agent back undoes what its killed life left (its VXLAN) and the cut chain runs across both
  nodes again, on the surviving agent under names it has not taken yet;
- a graph larger than a node is cut at the one edge a wire may carry (after its parallel group re-joins), the
  group's part a graph on its agent;
- deleted, both agents remove their parts and ports and no VXLAN is left on either host, nor anything in its
  /run/tandem once the agents stop. Each agent's accounting is exact, and the wire balances exactly between the two
  agents' reports."""

from __future__ import annotations

import contextlib
import json
import signal
import time
from pathlib import Path

import pytest
from integration.conftest import machine_before  # noqa: F401 (a fixture: the machine left as the test found it)
from kubernetes.chain_checks import (
    BESIDE_WIDE,
    COST,
    OFFERS,
    condition,
    cut_across_both,
    lab_across_both,
    placed_on,
    status_of,
    vxlans_on,
    wires_balanced,
)

from bench import kubernetes_cluster as cluster_support
from bench.kubernetes_cluster import delivering, node_annotations, wait_for
from bench.local_ports import free_port
from bench.node_hosts import MACHINE_ADDRESS, NodeHost, node_hosts, signal_agent
from bench.node_rates import rate_between, rate_for_share
from conftest import requires_root
from controlplane.kubernetes.tandem_nodes import COSTS
from controlplane.results.wire_balance import wire_balance

pytestmark = requires_root

# The share of a core the small chain's NF takes at its rate, on either node by its agent's own measured costs: it
# fits beside one of the wide chain's (chain_checks.BESIDE_WIDE).
SMALL_SHARE = BESIDE_WIDE


def chains_of(control) -> dict:
    return {chain.name: chain for chain in control.status().chains}


@contextlib.contextmanager
def two_agents(folder: Path):
    """Both node hosts, the API server and the operator, and an agent on each host once both reported their costs;
    yields (cluster, the operator's process, the hosts, node -> (process, control, results) of its agent's present
    life, start(host, life) to start another life of a host's agent). Everything stops on every way out."""
    with (
        node_hosts() as hosts,
        cluster_support.api_server_with_the_crd(MACHINE_ADDRESS) as cluster,
        contextlib.ExitStack() as lives,
    ):
        for host in hosts:
            cluster_support.add_ready_node(cluster, host.node)
        running = lives.enter_context(cluster_support.operator(cluster, folder, "--time-limit", "5"))
        ports = {host.node: free_port() for host in hosts}
        agents = {}

        def start(host: NodeHost, life: int) -> None:
            agents[host.node] = lives.enter_context(
                cluster_support.host_agent(cluster, folder, host, ports[host.node], OFFERS, f"{host.node}-{life}")
            )

        for host in hosts:
            start(host, 1)
        wait_for(lambda: all(COSTS in node_annotations(cluster, host.node) for host in hosts), "both nodes' reports")
        yield cluster, running, hosts, agents, start


def stopped_agents_results(agents: dict, hosts) -> dict[str, dict]:
    """Each agent stopped (exit 0), its results; each host's /run/tandem left as the agent found it: only its lock."""
    for process, control, _ in agents.values():
        control.stop()
        process.communicate(timeout=120)
        assert process.returncode == 0
    for host in hosts:
        assert [p.name for p in (host.run / "tandem").iterdir()] == ["lock"], host
    results = {node: json.loads(out.read_text()) for node, (_, _, out) in agents.items()}
    for node, result in results.items():
        assert result["accounting"]["exact"], (node, result["accounting"])
    return results


def last_wire_balance(results: dict[str, dict], sender: str, receiver: str) -> dict:
    """The last wire's balance from node `sender` to node `receiver`, from their agents' results."""
    sent = [p for p in results[sender]["ports"] if p.get("wire")][-1]
    came = [p for p in results[receiver]["ports"] if p.get("wire")][-1]
    return wire_balance(sent, came)


def deleted_from_both(cluster, running, agents: dict, hosts, resources: tuple[str, ...]) -> None:
    """The resources deleted: gone from the API server, their chains removed on each agent, no VXLAN on either host."""
    for name in resources:
        assert cluster.kubectl("delete", "servicechain", name, "--wait=false").returncode == 0
        wait_for(lambda name=name: status_of(cluster, name) is None, f"{name} gone", running)
    for host in hosts:  # as the agents' data planes next report
        wait_for(lambda host=host: _all_removed(agents[host.node][1], resources), f"{host.node} running none of them")
        assert vxlans_on(host) == []


@pytest.mark.usefixtures("machine_before")
def test_chains_across_two_agents_are_cut_moved_off_a_lost_node_and_removed_whole(tmp_path):
    with two_agents(tmp_path) as (cluster, running, hosts, agents, start):
        wide = cut_across_both(cluster, lambda node: agents[node][1], hosts, running)
        small_on = _small_chain_placed(cluster, running, agents)
        # The small chain's node lost (its agent killed): the chain moves to the other node; the wide one cannot run
        # on one node and waits for the lost one, its part on the node left removed.
        lost = next(host for host in hosts if host.node == small_on)
        left = next(host.node for host in hosts if host.node != small_on)
        killed = time.monotonic()
        signal_agent(agents[small_on][0], signal.SIGKILL)  # what it changed on its host stays for its next life
        agents[small_on][0].wait(timeout=60)
        wait_for(
            lambda: (
                condition(cluster, "small").get("status") == "True" and placed_on(cluster, "small") == {"only": left}
            ),
            "the small chain moved to the node left",
            running,
        )
        wait_for(lambda: delivering(agents[left][1], "small"), f"the small chain's traffic on {left}", running)
        moved_s = time.monotonic() - killed
        heal_s = status_of(cluster, "small")["healSeconds"]
        waiting = wait_for(lambda: (c := condition(cluster, "wide"))["status"] == "False" and c, "the wide one waiting")
        assert waiting["reason"] == "NoCapacity" and f"{small_on} lost" in waiting["message"], waiting
        assert vxlans_on(lost) and not vxlans_on(next(h for h in hosts if h.node == left))  # the dead agent's stays
        # Its agent back (as its DaemonSet starts it again): it undoes what its killed life left (the VXLAN), and the
        # wide chain is cut across both nodes again.
        start(lost, 2)
        wait_for(lambda: condition(cluster, "wide").get("status") == "True", "the wide chain again", running)
        wide = placed_on(cluster, "wide")
        assert set(wide.values()) == {"node-a", "node-b"}, wide
        wait_for(lambda: delivering(agents[wide["second"]][1], "wide"), "the wide chain's traffic again", running)
        # The node that stayed keeps its first part's name taken: its part now is the resource's second life there.
        wait_for(
            lambda: any(name.startswith("wide_1.") and not c.removed for name, c in chains_of(agents[left][1]).items()),
            f"the second life's part on {left}",
        )
        print(f"small chain off {small_on}: killed -> traffic on {left} {moved_s:.1f} s (healSeconds {heal_s})")
        # Deleted: each agent removes its parts and the wire's port, and no VXLAN is left on either host.
        deleted_from_both(cluster, running, agents, hosts, ("wide", "small"))
        results = stopped_agents_results(agents, hosts)
        # What the agent back said it undid (its output is written out as it ends).
        notes = (tmp_path / f"{small_on}-2.log").read_text()
        assert "removed interface tdx-" in notes and "which did not end cleanly" in notes, notes[-2000:]
    # The wire of the wide chain's last placement, from the node of its first NF to the node of its second.
    balance = last_wire_balance(results, wide["first"], wide["second"])
    assert balance["exact"] and balance["sent"] > 0, balance


def _all_removed(control, resources: tuple[str, ...]) -> bool:
    parts = [c for name, c in chains_of(control).items() if name.startswith(resources)]
    return bool(parts) and all(c.removed for c in parts)


def _small_chain_placed(cluster, running, agents: dict) -> str:
    """A chain of one NF that either node holds beside its part of the wide one, running; returns its node."""
    chain = cluster_support.service_chain(
        "small", f"{rate_for_share(cluster, SMALL_SHARE)} pps", [{"name": "only", **COST}]
    )
    assert cluster.kubectl("apply", "-f", "-", stdin=json.dumps(chain)).returncode == 0
    wait_for(lambda: condition(cluster, "small").get("status") == "True", "the small chain running", running)
    node = placed_on(cluster, "small")["only"]
    wait_for(lambda: delivering(agents[node][1], "small"), "the small chain's traffic", running)
    return node


@pytest.mark.usefixtures("machine_before")
def test_a_graph_larger_than_a_node_is_cut_at_the_one_edge_a_wire_may_carry(tmp_path):
    # g-a forks to g-b and g-c (a parallel group: both see every packet), which join at g-d; then g-e. Each NF takes
    # about 22 % of a core: the fork's four fit one node's NF core and all five do not, and a wire may carry only
    # g-d -> g-e (never one branch of the group: planning/graph_cuts.py).
    names = ["g-a", "g-b", "g-c", "g-d", "g-e"]
    edges = [("g-a", "g-b"), ("g-a", "g-c"), ("g-b", "g-d"), ("g-c", "g-d"), ("g-d", "g-e")]
    with two_agents(tmp_path) as (cluster, running, hosts, agents, _):
        # Four NFs fit the cheaper node's NF core (the fork goes there), five fit neither node's.
        rate = rate_between(cluster, fit=4, apart=5, fit_everywhere=False)
        resource = cluster_support.service_chain("forked", f"{rate} pps", [])
        resource["spec"]["chains"] = [
            {
                "name": "web",
                "graph": {
                    "nodes": [{"name": name, **COST} for name in names],
                    "edges": [{"from": a, "to": b} for a, b in edges],
                },
            }
        ]
        assert cluster.kubectl("apply", "-f", "-", stdin=json.dumps(resource)).returncode == 0
        ready = wait_for(lambda: condition(cluster, "forked") or None, "the graph's condition", running)
        assert ready["status"] == "True" and "1 wires between them" in ready["message"], ready
        placed = placed_on(cluster, "forked")
        assert len({placed[name] for name in names[:4]}) == 1 and placed["g-e"] != placed["g-a"], placed
        fork_on, tail_on = placed["g-a"], placed["g-e"]
        wait_for(lambda: delivering(agents[tail_on][1], "forked"), "packets through both nodes", running)
        hop = wait_for(
            lambda: next((h for h in status_of(cluster, "forked").get("hops") or [] if h["node"] == "wire"), None),
            "the wire's hop in the status",
        )
        assert (hop["from"], hop["to"]) == ("g-d", "g-e"), hop
        # The fork's part is a graph on its agent: both branches took the packets.
        fork_nfs = {nf.name: nf for nf in agents[fork_on][1].status().nfs}
        assert all(fork_nfs[f"forked.{name}"].in_mpps for name in ("g-b", "g-c")), fork_nfs
        deleted_from_both(cluster, running, agents, hosts, ("forked",))
        results = stopped_agents_results(agents, hosts)
    balance = last_wire_balance(results, fork_on, tail_on)
    assert balance["exact"] and balance["sent"] > 0, balance


@pytest.mark.usefixtures("machine_before")
def test_a_client_on_one_node_gets_its_page_from_a_server_on_the_other_through_chains_cut_across_both(tmp_path):
    # The client's port is on node-a and the server's on node-b: each way's chain starts on its port's node and ends
    # on the other's, cut into two parts joined by a wire (chain_checks.lab_across_both).
    with (
        two_agents(tmp_path) as (cluster, running, hosts, agents, _),
        lab_across_both(cluster, hosts, tmp_path, running) as lab,
    ):
        lab.page()
        deleted_from_both(cluster, running, agents, hosts, ("lab",))
        results = stopped_agents_results(agents, hosts)
    assert len(wires_balanced(results)) == 2
