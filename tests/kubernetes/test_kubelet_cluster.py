"""Tandem installed on a real cluster as its README says (`kubectl apply -k deploy/kubernetes`;
bench/tandem_daemonset.py): two kubelet nodes (containerd, runc; bench/kubelet_nodes.py) on the two node hosts,
kube-controller-manager and kube-scheduler, the tandem-node DaemonSet's pod on each node running the Tandem image
built with debootstrap (scripts/tandem-image.sh), and the operator's Deployment (non-root, read-only root, its
token read through its pod's group). The agents in their pods report their costs; a ServiceChain
larger than a node is cut across both, its packets crossing the VXLAN between the hosts, and a lab client on node-a
gets a web server's page on node-b through the chains of a ServiceChain between their ports; node-b's agent killed in
its pod, its kubelet starts it again and both run across both nodes again (the times measured); the resources
deleted, then the DaemonSet: each agent, stopped by its kubelet, drains, undoes what it changed and writes its
results, whose accounting is exact and whose wire balances; nothing of the nodes is left on the machine."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from integration.conftest import machine_before  # noqa: F401 (a fixture: the machine left as the test found it)
from kubernetes.chain_checks import (
    OFFERS,
    condition,
    cut_across_both,
    lab_across_both,
    placed_across_ports,
    placed_on,
    vxlans_on,
    wires_balanced,
)

from bench import kubernetes_cluster as cluster_support
from bench.kubelet_nodes import KUBELET_TUNABLES, kubelet_nodes
from bench.kubernetes_cluster import delivering, wait_for
from bench.node_hosts import MACHINE_ADDRESS, node_hosts
from bench.tandem_daemonset import HUGEPAGES, agent_pid, agent_pods, ready_and_restarts, tandem_installed
from conftest import requires_root

pytestmark = requires_root


@pytest.mark.timeout(900)  # ~2 min here, ~40 s of it the image (its base is built before the tests: scripts/test.sh)
@pytest.mark.usefixtures("machine_before")
def test_the_daemonset_runs_an_agent_per_kubelet_node_and_a_chain_spans_them(tmp_path):
    tunables = {name: (Path("/proc/sys") / name).read_text() for name in KUBELET_TUNABLES}
    with node_hosts() as hosts, cluster_support.api_server_with_the_crd(MACHINE_ADDRESS) as cluster:
        cluster.start_controllers()
        with (
            kubelet_nodes(cluster, hosts, HUGEPAGES),
            tandem_installed(cluster, hosts, tmp_path, OFFERS) as controls,
        ):
            placed = cut_across_both(cluster, controls.get, hosts)
            with lab_across_both(cluster, hosts, tmp_path) as lab:
                lab.page()
                # node-b's agent killed in its pod: its kubelet starts it again; the new agent undoes what the killed
                # one left, reports again, and both resources run across both nodes again: the lab's server, whose
                # port is on node-b, gives its page again.
                killed = time.monotonic()
                os.kill(agent_pid("node-b"), signal.SIGKILL)
                wait_for(lambda: ready_and_restarts(agent_pods(cluster)["node-b"]) == (True, 1), "node-b's agent back")
                wait_for(lambda: condition(cluster, "wide").get("status") == "True", "the chain placed again")
                placed = placed_on(cluster, "wide")
                assert set(placed.values()) == {"node-a", "node-b"}, placed
                wait_for(lambda: delivering(controls[placed["second"]], "wide"), "its traffic again")
                print(
                    f"node-b's agent killed -> the chain's traffic across both again: {time.monotonic() - killed:.1f} s"
                )
                wait_for(lambda: condition(cluster, "lab").get("status") == "True", "the lab placed again")
                lab.page()
                print(f"node-b's agent killed -> the lab's page again: {time.monotonic() - killed:.1f} s")
                placed_across_ports(cluster)
                # The resources deleted: each agent removes its parts and the wires' ports.
                for name in ("wide", "lab"):
                    assert cluster.kubectl("delete", "servicechain", name).returncode == 0
                for host in hosts:
                    wait_for(lambda host=host: not vxlans_on(host), f"no VXLAN left on {host.node}")
        # The DaemonSet deleted (tandem_installed's way out): each agent drained and wrote its results.
        results = {host.node: json.loads((tmp_path / "results" / f"{host.node}.json").read_text()) for host in hosts}
    for node, result in results.items():
        assert result["accounting"]["exact"], (node, result["accounting"])
    # The wires of the second placement (the killed agent wrote no results): the wide chain's and each lab way's.
    assert len(wires_balanced(results)) == 3
    # What the kubelets changed on the machine is put back.
    assert {name: (Path("/proc/sys") / name).read_text() for name in KUBELET_TUNABLES} == tunables
