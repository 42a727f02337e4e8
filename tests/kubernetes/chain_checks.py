"""What the cluster tests read and check of ServiceChains on two nodes (test_two_nodes.py, test_kubelet_cluster.py):
a resource's status, the VXLANs on a node host, a chain cut across both nodes with its packets crossing the wire, and a
lab's client on one node getting a web server's page on the other through chains cut across both."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import kubernetes_cluster as cluster_support
from bench.kubernetes_cluster import delivering, wait_for
from bench.node_hosts import NodeHost
from bench.node_lab_hosts import LabHost, lab_hosts
from bench.node_rates import rate_between, rate_for_share
from controlplane.machine.vxlan_links import PREFIX as VXLAN_PREFIX
from controlplane.results.wire_balance import wire_balance

COST = {"type": "cost", "args": {"cycles": 20_000}}
OFFERS = f"- {json.dumps(COST)}\n"  # what the agents measure and offer
# Shares of a core, at the rates placement plans for, by the agents' own measured costs (bench/node_rates.py):
BESIDE_WIDE = 0.15  # what fits beside one NF of the wide chain on a core: the lab's two NFs, or test_two_nodes' small
LAB_SHARE = 0.02  # each NF of the lab's chains
PAGE_BYTES = 256 * 1024


def status_of(cluster, name: str) -> dict | None:
    got = cluster.kubectl("get", "servicechain", name, "-o", "json")
    return (json.loads(got.stdout).get("status") or {}) if got.returncode == 0 else None


def condition(cluster, name: str) -> dict:
    return ((status_of(cluster, name) or {}).get("conditions") or [{}])[0]


def placed_on(cluster, name: str) -> dict[str, str]:
    return {p["nf"]: p["node"] for p in (status_of(cluster, name) or {}).get("placement") or []}


def vxlans_on(host: NodeHost) -> list[str]:
    links = subprocess.run(["ip", "-n", host.namespace, "-br", "link"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in links.splitlines() if line.startswith(VXLAN_PREFIX)]


def cut_across_both(cluster, control_of: Callable[[str], object], hosts, running=None) -> dict[str, str]:
    """The wide chain (two NFs that one node's NF core cannot hold) applied: cut into a part on each node joined by a
    wire whose VXLAN its packets cross, the wire's hop in its status; returns where its NFs run. control_of(node):
    a client of the node's agent; `running`: the operator's process, where the test started it."""
    nfs = [{"name": "first", **COST}, {"name": "second", **COST}]
    rate = rate_between(cluster, fit=1, apart=2, beside=BESIDE_WIDE)
    chain = cluster_support.service_chain("wide", f"{rate} pps", nfs)
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


@dataclass
class Lab:
    """A client on node-a and a web server on node-b (bench/node_lab_hosts.py), the `lab` ServiceChain between them."""

    client: LabHost
    server: LabHost
    page_file: Path  # what the server serves

    def page(self) -> None:
        """ping answers, and curl gets the server's page byte for byte, through the chains."""
        ping = self.client.run("ping", "-c", "3", "-i", "0.2", "-W", "2", self.server.address, timeout=30)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        got = self.page_file.with_name("got")
        url = f"http://{self.server.address}:8080/{self.page_file.name}"
        curl = self.client.run("curl", "--silent", "--fail", "--retry", "5", "--retry-connrefused",
                               "--max-time", "60", "--output", str(got), url, timeout=90)  # fmt: skip
        assert curl.returncode == 0, curl.stderr
        assert got.read_bytes() == self.page_file.read_bytes()
        got.unlink()


@contextlib.contextmanager
def lab_across_both(cluster, hosts, folder: Path, running=None) -> Iterator[Lab]:
    """The client's port on node-a and the server's on node-b: each way's chain (two NFs) starts on its port's node
    and ends on the other's, cut into two parts joined by a wire; the status shows each way's entry from its port.
    Yields the lab with python's web server running on the server; all of it removed on the way out."""
    by_node = {host.node: host for host in hosts}
    www = folder / "www"
    www.mkdir()
    (www / "page").write_bytes(os.urandom(PAGE_BYTES))
    with lab_hosts({"client": by_node["node-a"], "server": by_node["node-b"]}) as lab:
        resource = cluster_support.service_chain("lab", f"{rate_for_share(cluster, LAB_SHARE)} pps", [])
        resource["spec"]["ports"] = [
            {"name": name, "node": host.node.node, "interface": host.interface} for name, host in lab.items()
        ]
        # Rings of 512 (a TCP window's frames) beside the wide chain's 2,048, within the agent's packet pool.
        resource["spec"]["chains"] = [
            {"name": name, "from": source, "to": to, "ring_capacity": 512,
             "nfs": [{"name": f"{name}-{k}", **COST} for k in (1, 2)]}
            for name, source, to in (("up", "client", "server"), ("down", "server", "client"))
        ]  # fmt: skip
        assert cluster.kubectl("apply", "-f", "-", stdin=json.dumps(resource)).returncode == 0
        placed_across_ports(cluster, running)
        server = lab["server"]
        web = subprocess.Popen(
            ["ip", "netns", "exec", server.namespace, "python3", "-m", "http.server", "8080", "--bind",
             server.address, "--directory", str(www)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            yield Lab(lab["client"], server, www / "page")
        finally:
            web.kill()
            web.wait(timeout=30)


def placed_across_ports(cluster, running=None) -> None:
    """The lab resource running: each way from its port's node to the other's, its entries from its ports."""
    try:
        ready = wait_for(lambda: (c := condition(cluster, "lab")).get("status") == "True" and c, "the lab", running)
    except RuntimeError as error:
        raise AssertionError(f"{error}; its condition: {condition(cluster, 'lab')}") from None
    assert "2 wires between them" in ready["message"], ready
    placed = placed_on(cluster, "lab")
    assert placed == {"up-1": "node-a", "up-2": "node-b", "down-1": "node-b", "down-2": "node-a"}, placed
    # Each node's hops as its agent's next report lists its NFs.
    expected = {("client", "up-1", "node-a"), ("server", "down-1", "node-b")}

    def port_hops() -> set[tuple[str, str, str]]:
        hops = status_of(cluster, "lab").get("hops") or []
        return {(h["from"], h["to"], h["node"]) for h in hops if h["from"] in ("client", "server")}

    try:
        wait_for(lambda: port_hops() == expected, "each way's entry from its port in the status")
    except RuntimeError as error:
        raise AssertionError(f"{error}: {port_hops()}") from None


def wires_balanced(results: dict[str, dict]) -> list[dict]:
    """Each wire both of whose ends' agents wrote results (a killed agent writes none), balanced exactly from the two
    ends' reports; returns the balances."""
    wires: dict[str, dict[str, dict]] = {}
    for node, result in results.items():
        for port in result["ports"]:
            if port.get("wire"):
                wires.setdefault(port["name"], {})[node] = port
    balances = []
    for name, ends in wires.items():
        senders = [node for node, port in ends.items() if port["wire"]["sent"] > 0]
        if len(ends) < 2 or not senders:
            continue
        receiver = next(node for node in ends if node != senders[0])
        balance = wire_balance(ends[senders[0]], ends[receiver])
        assert balance["exact"] and balance["sent"] > 0, (name, balance)
        balances.append(balance)
    return balances
