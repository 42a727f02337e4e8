"""A chain whose NFs the placement put on more than one node, cut at each node's edge: one part per run of its NFs on
one node, each part a chain its node's agent adds, joined to the next by a wire (a VXLAN both agents make for a port
of the same name, its frames numbered so that each way balances exactly from the two nodes' reports). The wire runs
between the agents' advertised addresses (where the operator reaches them: in a DaemonSet on the host's network, the
nodes' own)."""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import secrets
from dataclasses import dataclass

from controlplane.kubernetes.tandem_nodes import TandemNode
from controlplane.planning import graph_cuts
from controlplane.planning.placement import PlacementError
from controlplane.spec.chain_graph import Edge, line_edges

VNI_RANGE = (1, 1 << 24)  # a VXLAN network identifier is 24 bits; 0 is reserved


@dataclass(frozen=True)
class Wire:
    """A wire between two parts of a cut chain: the port `name` on both nodes, its frames from `sender` to
    `receiver`, on VXLAN network `vni`; the packets of NF `source_nf` (the sending part's exit) to NF `target_nf`
    (the receiving part's entry), as the resource names them."""

    name: str
    vni: int
    sender: str
    receiver: str
    source_nf: str
    target_nf: str


@dataclass
class CutChain:
    parts: list[tuple[str, dict]]  # (node, the part as its agent adds it: a spec's `chains` entry), in chain order
    wires: list[Wire]  # wires[k] joins parts[k] to parts[k + 1]


def wire_address(node: TandemNode) -> str:
    """The address a wire to or from `node` runs to: its agent's advertised host, which must be an IP address."""
    host = node.control[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise PlacementError(
            f"node {node.name}'s agent advertises {host!r}: a wire between nodes needs its IP address "
            "(./tandem node --advertise ADDRESS:PORT)"
        ) from None
    if address.is_loopback or address.is_unspecified:
        raise PlacementError(f"node {node.name}'s agent advertises {host}: no other node reaches it there")
    return host


def cut(resource: str, chain: dict, where: dict[str, tuple[str, int]], vnis_in_use: set[int]) -> CutChain:
    """`chain` (a spec's `chains` entry of the resource, NF names as written) cut where its NFs change node (`where`:
    NF -> (node, core)). A graph is cut only at the edges a wire may carry (planning/graph_cuts.py), where the
    placement keeps the NFs between them on one node. Each wire gets a port name no earlier placement used (a
    removed port's name stays taken on its agent) and a VNI not in `vnis_in_use` (which it joins)."""
    graph = chain.get("graph")
    nfs = chain["nfs"] if graph is None else graph["nodes"]
    names = [nf["name"] for nf in nfs]
    edges = (
        line_edges(names, chain["name"])
        if graph is None
        else [Edge(edge["from"], edge["to"], edge.get("label"), chain["name"]) for edge in graph.get("edges", [])]
    )
    runs: list[tuple[str, list[str]]] = []
    for block in graph_cuts.blocks(names, edges):
        on = {where[name][0] for name in block}
        if len(on) > 1:
            raise PlacementError(
                f"chain {chain['name']}: NFs {', '.join(block)} are placed on nodes {', '.join(sorted(on))}, but a "
                "wire carries one edge between an NF that sends nothing else and one that nothing else feeds"
            )
        node = on.pop()
        if runs and runs[-1][0] == node:
            runs[-1][1].extend(block)
        else:
            runs.append((node, list(block)))
    # Names fit a port's 32 characters: the resource's digest (what forget_earlier finds), this placement's nonce.
    prefix = wire_prefix(resource)
    nonce = secrets.token_hex(3)
    wires = []
    for k in range(len(runs) - 1):
        vni = _free_vni(vnis_in_use)
        vnis_in_use.add(vni)
        # A block's last NF in chain order is its exit, the next one's first its entry (graph_cuts.blocks).
        wires.append(Wire(f"{prefix}{nonce}-{k}", vni, runs[k][0], runs[k + 1][0], runs[k][1][-1], runs[k + 1][1][0]))
    by_name = {nf["name"]: nf for nf in nfs}
    parts = []
    for k, (node, members) in enumerate(runs):
        part = {key: copy.deepcopy(value) for key, value in chain.items() if key not in ("nfs", "graph")}
        part["name"] = f"{chain['name']}.{k}"
        inside = [edge for edge in (graph or {}).get("edges", []) if edge["from"] in members and edge["to"] in members]
        if graph is None or _is_line(members, inside):
            part["nfs"] = [copy.deepcopy(by_name[name]) for name in members]
        else:
            part["graph"] = {"nodes": [copy.deepcopy(by_name[name]) for name in members], "edges": inside}
        if k > 0:  # fed by the wire: the traffic is the first part's
            part["from"] = wires[k - 1].name
            part.pop("traffic", None)
        if k < len(runs) - 1:
            part["to"] = wires[k].name
        parts.append((node, part))
    return CutChain(parts, wires)


def _is_line(names: list[str], edges: list[dict]) -> bool:
    """Whether `edges` join `names` one to the next, unlabelled, and nothing else: a part given as a line."""
    joined = [(edge["from"], edge["to"]) for edge in edges if edge.get("label") is None]
    return len(joined) == len(edges) and sorted(joined) == sorted(zip(names, names[1:], strict=False))


def wire_prefix(resource: str) -> str:
    """The start of every wire port's name of the resource's cut chains."""
    return "w" + hashlib.sha256(resource.encode()).hexdigest()[:8] + "-"


def wire_port(wire: Wire, node: str, nodes: dict[str, TandemNode]) -> dict:
    """The wire's port on `node` (its sender's or its receiver's), as a spec's `ports` entry its agent adds."""
    peer = wire.receiver if node == wire.sender else wire.sender
    vxlan = {"vni": wire.vni, "local": wire_address(nodes[node]), "remote": wire_address(nodes[peer])}
    return {"name": wire.name, "vxlan": vxlan}


def _free_vni(in_use: set[int]) -> int:
    while True:
        vni = secrets.randbelow(VNI_RANGE[1] - VNI_RANGE[0]) + VNI_RANGE[0]
        if vni not in in_use:
            return vni
