"""What the cluster tests read and check of ServiceChains on two nodes (test_two_nodes.py, test_kubelet_cluster.py):
a resource's status, the rate at which a cost NF takes a share of a node's core by the agents' own measured costs,
the VXLANs on a node host, and a chain cut across both nodes with its packets crossing the wire."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

from bench import kubernetes_cluster as cluster_support
from bench.kubernetes_cluster import delivering, node_annotations, wait_for
from bench.node_hosts import NodeHost
from controlplane.kubernetes.tandem_nodes import COSTS, TSC_HZ
from controlplane.machine.vxlan_links import PREFIX as VXLAN_PREFIX

COST = {"type": "cost", "args": {"cycles": 20_000}}
OFFERS = f"- {json.dumps(COST)}\n"  # what the agents measure and offer
SHARE = 0.7  # of a core, each NF of the wide chain: two of them do not fit one node's NF core, one does


def status_of(cluster, name: str) -> dict | None:
    got = cluster.kubectl("get", "servicechain", name, "-o", "json")
    return (json.loads(got.stdout).get("status") or {}) if got.returncode == 0 else None


def condition(cluster, name: str) -> dict:
    return ((status_of(cluster, name) or {}).get("conditions") or [{}])[0]


def placed_on(cluster, name: str) -> dict[str, str]:
    return {p["nf"]: p["node"] for p in (status_of(cluster, name) or {}).get("placement") or []}


def rate_for_share(cluster, share: float) -> int:
    """Packets a second at which a cost NF takes `share` of node-a's core, by node-a's measured model (the costlier
    batch of one packet: at larger batches it takes a little less)."""
    annotations = node_annotations(cluster, "node-a")
    model = next(m for m in json.loads(annotations[COSTS]) if m["type"] == "cost")
    return int(share * float(annotations[TSC_HZ]) / (model["k_cycles"] + model["c_cycles"]))


def vxlans_on(host: NodeHost) -> list[str]:
    links = subprocess.run(["ip", "-n", host.namespace, "-br", "link"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in links.splitlines() if line.startswith(VXLAN_PREFIX)]


def cut_across_both(cluster, control_of: Callable[[str], object], hosts, running=None) -> dict[str, str]:
    """The wide chain (two NFs that one node's NF core cannot hold) applied: cut into a part on each node joined by a
    wire whose VXLAN its packets cross, the wire's hop in its status; returns where its NFs run. control_of(node):
    a client of the node's agent; `running`: the operator's process, where the test started it."""
    nfs = [{"name": "first", **COST}, {"name": "second", **COST}]
    chain = cluster_support.service_chain("wide", f"{rate_for_share(cluster, SHARE)} pps", nfs)
    assert cluster.kubectl("apply", "-f", "-", stdin=json.dumps(chain)).returncode == 0
    ready = wait_for(lambda: condition(cluster, "wide") or None, "the wide chain's condition", running)
    assert ready["status"] == "True" and "1 wires between them" in ready["message"], ready
    placed = placed_on(cluster, "wide")
    assert set(placed.values()) == {"node-a", "node-b"}, placed
    wait_for(lambda: delivering(control_of(placed["second"]), "wide"), "packets through both nodes", running)
    hop = wait_for(
        lambda: next((h for h in status_of(cluster, "wide").get("hops") or [] if h["node"] == "wire"), None),
        "the wire's hop in the status",
    )
    assert (hop["from"], hop["to"]) == ("first", "second") and hop["delayUs"] > 0, hop
    assert all(vxlans_on(host) for host in hosts)
    return placed
