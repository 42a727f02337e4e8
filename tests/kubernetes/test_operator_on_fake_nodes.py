"""The operator (`./tandem operator --plan-only`) over many nodes: kwok keeps fake Nodes Ready with heartbeats as
kubelets would, each reporting Tandem cores and costs. Every ServiceChain is placed on one node, within the cores it
reports, sharing cores with other ServiceChains where they have room and never past a core's capacity; a bad node
report is passed over; a node lost (deleted) moves every ServiceChain it held to the nodes left, and the others stay
where they were."""

from __future__ import annotations

import contextlib
import json
import time

import pytest

from bench.kubernetes_cluster import FIREWALL_AND_COUNTER, api_server_with_the_crd, operator, service_chain
from controlplane.kubernetes.tandem_nodes import TSC_HZ, annotations

NODES, CORES, CHAINS = 24, 4, 40
COSTS = [
    {"type": "firewall", "args": {"synthetic_rules": 10}, "k_cycles": 300.0, "c_cycles": 2000.0},
    {"type": "counter", "args": {}, "k_cycles": 80.0, "c_cycles": 1000.0},
]
SETTLE_S = 180  # 40 placements of ~0.1 s each, serialised, plus kopf's own pace; a loaded CI host gets a wide margin


def chain_resource(i: int) -> dict:
    # Rates from 1 to 3 Mpps: at these costs a chain needs one to three of a node's cores (300 + 80 cycles a packet
    # and batch costs, on a 2 GHz clock: about 0.2 cores a Mpps per NF).
    return service_chain(f"chain-{i:03d}", f"{1.0 + (i % 5) * 0.5} Mpps", FIREWALL_AND_COUNTER)


@contextlib.contextmanager
def cluster_of_fake_nodes(tmp_path):
    with api_server_with_the_crd() as cluster:
        cluster.start_kwok()
        nodes = [
            {
                "name": f"fake-{n:02d}",
                "annotations": annotations(f"198.18.0.{n + 1}:7100", list(range(1, CORES + 1)), 2e9, COSTS),
            }
            for n in range(NODES)
        ]
        nodes[0]["annotations"][TSC_HZ] = "fast"  # a bad report: this node is passed over, the operator says why
        cluster.add_fake_nodes(nodes, CORES + 1)
        with operator(cluster, tmp_path, "--plan-only", "--time-limit", "5") as running:
            yield cluster, running


def placements(cluster) -> dict[str, dict]:
    listed = json.loads(cluster.kubectl("get", "servicechains", "-o", "json").stdout)["items"]
    return {item["metadata"]["name"]: item.get("status") or {} for item in listed}


def wait_all_planned(cluster, running) -> dict[str, dict]:
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        found = placements(cluster)
        planned = {
            name: status
            for name, status in found.items()
            if status.get("conditions") and status["conditions"][0]["reason"] == "Planned"
        }
        if len(planned) == CHAINS:
            return planned
        assert running.poll() is None, running.log.read_text()[-3000:]
        time.sleep(1)
    raise AssertionError(f"not every ServiceChain planned in {SETTLE_S} s: {len(planned)} of {CHAINS}")


def core_loads(planned: dict[str, dict]) -> dict[tuple[str, int], float]:
    """(node, core) -> the share of it every ServiceChain's NFs take together, as their statuses say; none past 1."""
    loads: dict[tuple[str, int], float] = {}
    for status in planned.values():
        for p in status["placement"]:
            loads[p["node"], p["core"]] = loads.get((p["node"], p["core"]), 0.0) + p["coreShare"]
    assert all(load <= 1 + 1e-5 for load in loads.values()), loads
    return loads


@pytest.mark.timeout(900)
def test_the_operator_places_every_chain_on_free_cores_and_moves_those_of_a_lost_node(tmp_path):
    with cluster_of_fake_nodes(tmp_path) as (cluster, running):
        resources = "\n---\n".join(json.dumps(chain_resource(i)) for i in range(CHAINS))
        assert cluster.kubectl("apply", "-f", "-", stdin=resources).returncode == 0
        planned = wait_all_planned(cluster, running)
        held = core_loads(planned)
        assert all(node != "fake-00" and 1 <= core <= CORES for node, core in held)
        assert "node fake-00: annotation tandem.dev/tsc-hz" in running.log.read_text()
        for status in planned.values():
            assert len({p["node"] for p in status["placement"]}) == 1  # a chain that fits a node stays on it
        # Fewest cores, cores shared between ServiceChains: fewer cores than chains (each needs 0.25 to 0.75 of one),
        # let alone one per NF (what the CPU manager would give).
        assert len(held) < CHAINS

        # A node lost: its chains move to the nodes left, every other chain stays where it was.
        lost = next(iter(held))[0]
        moved = {name for name, status in planned.items() if any(p["node"] == lost for p in status["placement"])}
        assert cluster.kubectl("delete", "node", lost).returncode == 0
        before = {name: status["placement"] for name, status in planned.items()}
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            now = {name: status.get("placement") for name, status in placements(cluster).items()}
            if all(now[name] and now[name] != before[name] for name in moved):
                break
            time.sleep(1)
        else:
            raise AssertionError(f"the chains of lost node {lost} were not moved in {SETTLE_S} s")
        after = wait_all_planned(cluster, running)
        core_loads(after)
        assert all(p["node"] != lost for status in after.values() for p in status["placement"])
        assert all(after[name]["placement"] == before[name] for name in set(before) - moved)
        assert all(after[name].get("healSeconds", 0) > 0 for name in moved)  # from finding the node lost to placed
