"""Two Tandem nodes on one machine, for the wire's test and benchmark: two network namespaces stand for the nodes'
hosts (198.18.0.1 and .2 on a veth: the benchmarking range, never an address of the machine's own network), joined
by a VXLAN whose two ends sit in the root namespace, where the data plane opens them as wire ports, while each
end's tunnel stays in its node's namespace. An nftables rule in each node may drop a share of the VXLAN datagrams
at random, and counts what it dropped: the reference the wire ports' loss counts are checked against. IPv6 is off
and the neighbours are static, so nothing but the tunnel's datagrams crosses the underlay. Everything is removed on
the way out, whatever the way out."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Node:
    namespace: str
    underlay: str  # its end of the veth between the nodes
    address: str
    vxlan: str  # its wire port's interface, in the root namespace


NODE_A = Node("tdw-node-a", "tdw-ua", "198.18.0.1", "tdw-east")
NODE_B = Node("tdw-node-b", "tdw-ub", "198.18.0.2", "tdw-west")
VNI = 4242
# A 1,500-byte packet and the wire's 20-byte trailer (dataplane/ports/wire/link_trailer.h).
WIRE_MTU = 1520
# A LAN of jumbo frames carries a wire's datagram whole (1,570 bytes: the frame, VXLAN's 50); one of 1,500 (a LAN's
# default) carries it in two IP fragments, which bench/wire_link.py measures.
UNDERLAY_MTU = 9000


def ip(*args: str) -> str:
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True).stdout


def _in_node(node: Node, *command: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", node.namespace, *command], check=True, text=True, **kwargs)


def _remove() -> None:
    for node in (NODE_A, NODE_B):
        subprocess.run(["ip", "link", "del", node.vxlan], capture_output=True)
        subprocess.run(["ip", "netns", "del", node.namespace], capture_output=True)


def _lossy_output(loss_percent: int) -> str:
    """nftables: drop `loss_percent` in a hundred of the node's VXLAN datagrams at random, counted."""
    return f"""
table inet tdw {{
  chain output {{
    type filter hook output priority 0;
    udp dport 4789 numgen random mod 100 < {loss_percent} counter drop
  }}
}}
"""


def _make_end(node: Node, peer: Node, loss_percent: int, link: bool) -> None:
    shown = json.loads(ip("-n", peer.namespace, "-j", "link", "show", peer.underlay))
    ip("-n", node.namespace, "neigh", "replace", peer.address, "lladdr", shown[0]["address"], "dev", node.underlay,
       "nud", "permanent")  # fmt: skip
    if link:
        tunnel = [
            "id",
            str(VNI),
            "local",
            node.address,
            "remote",
            peer.address,
            "dstport",
            "4789",
        ]  # no `dev`, as Tandem's own VXLAN ports: the kernel caps a VXLAN bound to a device at its MTU less 50
        ip(
            "-n",
            node.namespace,
            "link",
            "add",
            node.vxlan,
            "mtu",
            str(WIRE_MTU),
            "type",
            "vxlan",
            *tunnel,
            "nolearning",
        )
        ip("-n", node.namespace, "link", "set", node.vxlan, "netns", "1")  # into the root namespace (PID 1's)
        subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{node.vxlan}.disable_ipv6=1"], check=True)
        ip("link", "set", node.vxlan, "up")
    _in_node(node, "nft", "-f", "-", input=_lossy_output(loss_percent))


@contextlib.contextmanager
def two_nodes(
    loss_percent: int = 0, links: bool = True, underlay_mtu: int = UNDERLAY_MTU
) -> Iterator[tuple[Node, Node]]:
    """Nodes A and B and the VXLAN between them (unless `links` is False: the wire's ports then make it, VXLAN_PORTS),
    `loss_percent` of its datagrams dropped each way, over a LAN of `underlay_mtu` (root)."""
    _remove()
    try:
        for node in (NODE_A, NODE_B):
            ip("netns", "add", node.namespace)
            for key in ("all", "default"):
                _in_node(node, "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
        ip("link", "add", NODE_A.underlay, "netns", NODE_A.namespace, "mtu", str(underlay_mtu), "type", "veth", "peer",
           "name", NODE_B.underlay, "netns", NODE_B.namespace, "mtu", str(underlay_mtu))  # fmt: skip
        for node in (NODE_A, NODE_B):
            ip("-n", node.namespace, "addr", "add", f"{node.address}/24", "dev", node.underlay)
            ip("-n", node.namespace, "link", "set", node.underlay, "up")
        _make_end(NODE_A, NODE_B, loss_percent, links)
        _make_end(NODE_B, NODE_A, loss_percent, links)
        yield NODE_A, NODE_B
    finally:
        _remove()


def dropped_by_nftables(node: Node) -> int:
    """The VXLAN datagrams `node`'s rule dropped on their way out (to the other node)."""
    listed = _in_node(node, "nft", "-j", "list", "table", "inet", "tdw", capture_output=True)
    rules = [item["rule"] for item in json.loads(listed.stdout)["nftables"] if "rule" in item]
    return next(e["counter"]["packets"] for rule in rules for e in rule["expr"] if "counter" in e)


def fragment_counts(node: Node) -> dict[str, int]:
    """The IP fragments `node`'s kernel made and the datagrams it put together from them (its /proc/net/snmp)."""
    snmp = _in_node(node, "cat", "/proc/net/snmp", capture_output=True).stdout.splitlines()
    names, values = (line.split()[1:] for line in snmp if line.startswith("Ip:"))
    counts = dict(zip(names, map(int, values), strict=True))
    return {"fragments_made": counts["FragCreates"], "reassembled": counts["ReasmOKs"]}


# The chains of the wire's spec: the client's traffic through node A's chain (a firewall), the wire and node B's (a
# firewall) to the server; the server's back through a counter on each node.
WIRE_CHAINS = {
    "a-out": "{name: a-out, from: client, to: east, nfs: [{name: fw-a, type: firewall, core: 1}]}",
    "b-in": "{name: b-in, from: west, to: server, nfs: [{name: fw-b, type: firewall, core: 1}]}",
    "b-out": "{name: b-out, from: server, to: west, nfs: [{name: count-b, type: counter, core: 1}]}",
    "a-in": "{name: a-in, from: east, to: client, nfs: [{name: count-a, type: counter, core: 1}]}",
}


# The wire's two ends, as a spec's ports entries: the data plane opens each VXLAN's root-namespace end.
WIRE_PORTS = {
    "east": f'{{name: east, device: "net_af_packet_east,iface={NODE_A.vxlan},framecnt=4096", wire: true}}',
    "west": f'{{name: west, device: "net_af_packet_west,iface={NODE_B.vxlan},framecnt=4096", wire: true}}',
}
# The same ends as ports whose VXLAN Tandem makes, each tunnel's socket in its node's namespace (where a node agent's
# is its host's): what the operator asks a node's agent for when a chain goes on to another node.
VXLAN_PORTS = {
    "east": f"{{name: east, vxlan: {{vni: {VNI}, local: {NODE_A.address}, remote: {NODE_B.address}, "
    f"namespace: {NODE_A.namespace}}}}}",
    "west": f"{{name: west, vxlan: {{vni: {VNI}, local: {NODE_B.address}, remote: {NODE_A.address}, "
    f"namespace: {NODE_B.namespace}}}}}",
}
# A chain of the generator's, for a spec whose chains between the nodes all come later (added live).
IDLE_CHAIN = "{name: idle, traffic: {rate: 1 kpps}, nfs: [{name: idle, type: checkip, core: 1}]}"


def wire_spec(
    iperf3_seconds: int = 2,
    chains: tuple[str, ...] = tuple(WIRE_CHAINS),
    pings: int = 100,
    ports: dict[str, str] | None = WIRE_PORTS,
    ring_capacity: int = 2048,  # the spec's default
    duration: int | None = None,
) -> str:
    """A lab client on node A and its server on node B, `chains` of WIRE_CHAINS between them (none: an idle chain of
    the generator's), the wire's `ports` (none: no port): ping, then iperf3, for at most `duration` s (the
    clients' own time limits where not given; with the idle chain, a spec's default duration)."""
    listed = "\n".join(f"  - {WIRE_CHAINS[name]}" for name in chains) or f"  - {IDLE_CHAIN}"
    wire_ports = "ports:\n" + "\n".join(f"  - {port}" for port in ports.values()) if ports else ""
    # Unanswered at first (a way between the nodes added live), ping's sends wait for the unknown neighbour, fail
    # with ENOBUFS once its queue is full, and ping backs off: 600 pings 10 ms apart outlasted 16 s on a loaded
    # control core. Its time limit leaves room for that.
    time_limit = pings // 20 + 10
    return f"""
name: wire
description: a lab client on node A, its server on node B, one VXLAN between them
scheduler: {{name: coop, options: {{k: 8}}}}
ring_capacity: {ring_capacity}
{f"duration: {duration}" if duration else ""}
{wire_ports}
lab:
  hosts:
    - name: client
      run:
        - {{command: "ping -c {pings} -i 0.01 -W 1 {{server}}", time_limit: {time_limit}}}
        - {{command: "iperf3 --client {{server}} --time {iperf3_seconds} --json", time_limit: {iperf3_seconds + 20}}}
    - name: server
      serve: ["iperf3 --server"]
chains:
{listed}
"""
