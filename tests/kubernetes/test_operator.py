"""The ServiceChain operator (`./tandem operator`, on kopf) against a real API server and a real Tandem node agent
(`./tandem node`: it measures its NFs' costs, serves with its control API on TCP and a token, and reports itself on
its Node, taking the report off as it stops): a chain whose NF costs no node reported waits, naming the
NF; a chain placed is added on the agent and carries traffic while the agent's own chain runs on, its status names
node and core and its hops' rates; its firewall's rules changed live, then its rate changed (the chain added anew,
under names the agent has not taken yet); the agent lost and back (as its DaemonSet would start it again), the
operator places the chain again (the time measured); the resource deleted, the agent no longer runs it, and the
finalizer lets the resource go. The agent's accounting stays exact through all of it."""

from __future__ import annotations

import json
import time

import pytest
from integration.conftest import machine_before  # noqa: F401 (a fixture: the machine left as the test found it)

from bench.kubernetes_cluster import (
    AGENT_OFFERS,
    AGENT_SPEC,
    FIREWALL_AND_COUNTER,
    add_ready_node,
    api_server_with_the_crd,
    node_agent,
    node_annotations,
    operator,
    service_chain,
    wait_for,
)
from bench.local_ports import free_port
from conftest import requires_root
from controlplane.kubernetes.tandem_nodes import CONTROL, CORES, COSTS
from controlplane.launch.control_client import Control

pytestmark = requires_root

EDGE = json.dumps(service_chain("edge", "50 kpps", FIREWALL_AND_COUNTER))
# The same chain with its firewall's rules changed: the agent measured both, so the operator knows its cost.
MORE_RULES = {"synthetic_rules": 20}
EDGE_MORE_RULES = json.dumps(
    service_chain("edge", "50 kpps", [FIREWALL_AND_COUNTER[0] | {"args": MORE_RULES}, FIREWALL_AND_COUNTER[1]])
)
OFFERS = AGENT_OFFERS + f"- {{type: firewall, args: {json.dumps(MORE_RULES)}}}\n"
UNMEASURED = json.dumps(
    service_chain("unmeasured", "50 kpps", [FIREWALL_AND_COUNTER[0], {"name": "count", "type": "ttl"}])
)


@pytest.fixture(scope="module")
def cluster():
    with api_server_with_the_crd() as server:
        yield server


def agent(cluster, tmp_path, port: int, name: str):
    """Node node-a's agent: its own counter chain, and the firewall it offers besides."""
    return node_agent(cluster, tmp_path, "node-a", port, AGENT_SPEC, OFFERS, name)


def resource(cluster, name: str) -> dict | None:
    got = cluster.kubectl("get", "servicechain", name, "-o", "json")
    return json.loads(got.stdout) if got.returncode == 0 else None


def ready(cluster, name: str) -> dict | None:
    """The resource's Ready condition, once the operator wrote one."""
    found = resource(cluster, name)
    conditions = ((found or {}).get("status") or {}).get("conditions") or []
    return conditions[0] if conditions else None


def delivered(control: Control, chain: str) -> int:
    try:
        status = control.status()
    except Exception:  # noqa: BLE001 - the agent is between lives
        return 0
    return next((c.delivered for c in status.chains if c.name == chain and not c.removed), 0)


@pytest.mark.usefixtures("machine_before")
def test_the_operator_places_heals_and_removes_a_chain_on_a_real_agent(cluster, tmp_path):
    port = free_port()
    add_ready_node(cluster, "node-a")
    with operator(cluster, tmp_path, "--time-limit", "5") as running:
        with agent(cluster, tmp_path, port, "first") as (process, control, out):
            reported = wait_for(lambda: node_annotations(cluster, "node-a").get(CONTROL), "the agent's report")
            assert reported == f"127.0.0.1:{port}" and node_annotations(cluster, "node-a")[CORES] == "1"
            measured = {entry["type"] for entry in json.loads(node_annotations(cluster, "node-a")[COSTS])}
            assert measured == {"firewall", "counter"}
            placed_s = _placed_while_the_agent_runs(cluster, running, control)
            _rules_changed_live(cluster, running, control)
            _rate_changed_added_anew(cluster, running, control)
            # The node's agent lost (stopped, as a killed pod's agent ends): the operator says so.
            control.stop()
            process.communicate(timeout=120)
        assert process.returncode == 0
        assert CONTROL not in node_annotations(cluster, "node-a")  # the agent took its report off as it stopped
        first = json.loads(out.read_text())
        assert first["accounting"]["exact"], first["accounting"]
        lost = wait_for(
            lambda: (c := ready(cluster, "edge")) and c["status"] == "False" and "node-a lost" in c["message"] and c,
            "the operator finding the node lost",
            running,
        )
        assert lost["reason"] == "NoCapacity", lost  # node-a was the only node
        # The agent back on its node (its DaemonSet starts it again): the chain is placed on it again.
        with agent(cluster, tmp_path, port, "second") as (process, control, out):
            back = time.monotonic()
            wait_for(lambda: delivered(control, "edge.web") > 0, "the chain on the agent that came back", running)
            print(f"placed in {placed_s:.1f} s; traffic again {time.monotonic() - back:.1f} s after the agent was back")
            healed = wait_for(lambda: resource(cluster, "edge")["status"].get("healSeconds"), "the heal time")
            assert healed > 0 and ready(cluster, "edge")["status"] == "True"
            # Deleted: the agent stops the chain, and the finalizer lets the resource go.
            assert cluster.kubectl("delete", "servicechain", "edge", "--wait=false").returncode == 0
            wait_for(lambda: resource(cluster, "edge") is None, "the resource gone", running)
            removed = [chain for chain in control.status().chains if chain.name == "edge.web"]
            assert removed and removed[0].removed, removed
            assert cluster.kubectl("delete", "servicechain", "unmeasured").returncode == 0
            control.stop()
            process.communicate(timeout=120)
    assert process.returncode == 0
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"], results["accounting"]
    chain = next(chain for chain in results["chains"] if chain["name"] == "edge.web")
    assert chain["delivered"] > 0 and chain["generated"] == chain["delivered"] + chain["dropped"]["total"]


def _rules_changed_live(cluster, running, control: Control) -> None:
    """The resource's firewall rules changed: the agent's NF takes them between two batches, its process and its
    chain stay (removing and adding the chain again would lose what was in it)."""
    pid = next(nf.pid for nf in control.status().nfs if nf.name == "edge.fw")
    assert cluster.kubectl("apply", "-f", "-", stdin=EDGE_MORE_RULES).returncode == 0
    changed = wait_for(
        lambda: "changed live" in ((c := ready(cluster, "edge")) or {}).get("message", "") and c,
        "the rules changed live",
        running,
    )
    assert changed["status"] == "True" and "edge.fw" in changed["message"], changed
    status = control.status()
    assert next(nf.pid for nf in status.nfs if nf.name == "edge.fw") == pid
    assert [chain.removed for chain in status.chains if chain.name == "edge.web"] == [False]
    made = [change for change in status.changes if change.get("op") == "set_args"]
    assert [(change.get("nf"), change.get("state")) for change in made] == [("edge.fw", "applied")], made


def _rate_changed_added_anew(cluster, running, control: Control) -> None:
    """The resource's rate changed: its chain is removed and added anew on the same agent, under the names of its
    second life there (the agent keeps the removed chain's names taken)."""
    assert cluster.kubectl("apply", "-f", "-", stdin=EDGE_MORE_RULES.replace("50 kpps", "40 kpps")).returncode == 0
    wait_for(
        lambda: (
            "placed and added" in ((c := ready(cluster, "edge")) or {}).get("message", "") and c["status"] == "True"
        ),
        "the chain added anew",
        running,
    )
    # The agent's status has an added chain from its data plane's next report on.
    wanted = {"edge.web": True, "edge_1.web": False}
    wait_for(
        lambda: {c.name: c.removed for c in control.status().chains if c.name.startswith("edge")} == wanted,
        "the first life's chain removed and the second's added",
    )
    wait_for(lambda: delivered(control, "edge_1.web") > 0, "the chain's traffic in its second life")
    assert {nf.name for nf in control.status().nfs if not nf.removed} >= {"edge_1.fw", "edge_1.count"}


def _placed_while_the_agent_runs(cluster, running, control: Control) -> float:
    # No node measured a ttl NF: nothing says how many cores it needs, so the chain waits, naming the NF.
    assert cluster.kubectl("apply", "-f", "-", stdin=UNMEASURED).returncode == 0
    waiting = wait_for(lambda: ready(cluster, "unmeasured"), "the unmeasured chain's condition", running)
    assert waiting["status"] == "False" and waiting["reason"] == "CostsUnknown", waiting
    assert "NF count (type ttl" in waiting["message"], waiting
    began = time.monotonic()
    assert cluster.kubectl("apply", "-f", "-", stdin=EDGE).returncode == 0
    wait_for(lambda: (ready(cluster, "edge") or {}).get("status") == "True", "the chain running", running)
    placed_s = time.monotonic() - began
    status = resource(cluster, "edge")["status"]
    assert [(p["nf"], p["node"], p["core"]) for p in status["placement"]] == [
        ("count", "node-a", 1),
        ("fw", "node-a", 1),
    ]
    assert all(0 < p["coreShare"] < 1 for p in status["placement"]), status  # at the agent's measured costs
    wait_for(lambda: delivered(control, "edge.web") > 0, "the placed chain's traffic")
    assert delivered(control, "own") > 0  # the agent's own chain runs on beside it
    hops = wait_for(
        lambda: [h for h in (resource(cluster, "edge")["status"].get("hops") or []) if h["rateMpps"] > 0],
        "the hops' rates in the status",
    )
    assert {(hop["from"], hop["to"], hop["node"]) for hop in hops} <= {
        ("entry", "fw", "node-a"),
        ("fw", "count", "node-a"),
    }, hops
    return placed_s
