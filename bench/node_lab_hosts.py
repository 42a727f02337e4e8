"""Lab hosts beside the cluster's node hosts (bench/node_hosts.py), for real clients and servers whose packets a
ServiceChain carries across nodes: each lab host a network namespace with one interface (eth0, its address in the
benchmarking range), joined by a veth to its node host, whose end there is the interface a ServiceChain's port names
(`ports: [{name, node, interface}]`). Both ends as a lab's are (controlplane/machine/lab_network.py says why): the
offloads that make frames a packet socket cannot forward off, no IPv6, and no ARP on the node's end, which takes no
part itself. Removed on every way out (deleting a namespace deletes its veth, both ends)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

from bench.node_hosts import NodeHost
from controlplane.machine.lab_network import HOST_INTERFACE, OFFLOADS_OFF

SUBNET = "198.18.50"  # a /24 of the benchmarking range, apart from the node hosts' LAN (198.18.40.0/24)


@dataclass(frozen=True)
class LabHost:
    name: str
    node: NodeHost  # the node host its veth joins
    address: str  # on its eth0, in SUBNET.0/24

    @property
    def namespace(self) -> str:
        return f"tdk-lab-{self.name}"

    @property
    def interface(self) -> str:
        """Its veth's end in the node host's namespace: what the ServiceChain's port names."""
        return f"tdkl-{self.name}"

    def run(self, *command: str, timeout: float) -> subprocess.CompletedProcess:
        """`command` in the host's namespace, its output captured."""
        return subprocess.run(
            ["ip", "netns", "exec", self.namespace, *command], capture_output=True, text=True, timeout=timeout
        )


def _run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, text=True)


def _offloads_off(namespace: str, interface: str) -> None:
    _run("ip", "netns", "exec", namespace, "ethtool", "-K", interface, *[w for f in OFFLOADS_OFF for w in (f, "off")])


def _remove(hosts: list[LabHost]) -> None:
    for host in hosts:
        subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True)


@contextlib.contextmanager
def lab_hosts(placed: dict[str, NodeHost]) -> Iterator[dict[str, LabHost]]:
    """A lab host per name in `placed` (name -> the node host it hangs off, addresses in that order); removed on
    every way out."""
    hosts = [LabHost(name, node, f"{SUBNET}.{k + 1}") for k, (name, node) in enumerate(placed.items())]
    _remove(hosts)
    try:
        for host in hosts:
            _run("ip", "netns", "add", host.namespace)
            _run("ip", "netns", "exec", host.namespace, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                 "net.ipv6.conf.default.disable_ipv6=1")  # fmt: skip
            node = host.node.namespace
            _run("ip", "-n", node, "link", "add", host.interface, "type", "veth", "peer", "name", HOST_INTERFACE,
                 "netns", host.namespace)  # fmt: skip
            _run("ip", "netns", "exec", node, "sysctl", "-qw", f"net.ipv6.conf.{host.interface}.disable_ipv6=1")
            _run("ip", "-n", node, "link", "set", host.interface, "arp", "off", "up")
            _offloads_off(node, host.interface)
            _offloads_off(host.namespace, HOST_INTERFACE)
            _run("ip", "-n", host.namespace, "link", "set", "lo", "up")
            _run("ip", "-n", host.namespace, "address", "add", f"{host.address}/24", "dev", HOST_INTERFACE)
            _run("ip", "-n", host.namespace, "link", "set", HOST_INTERFACE, "up")
        yield {host.name: host for host in hosts}
    finally:
        _remove(hosts)
