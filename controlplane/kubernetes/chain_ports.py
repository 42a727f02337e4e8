"""A ServiceChain's ports on their nodes: the NFs they pin (a chain's first NFs where its `from` port is, its last
where its `to` port is), and each port as its node's agent adds it, under a name of this placement's (an agent keeps
a removed port's name taken) that starts as the resource's wires' do, so that what forgets them forgets it too."""

from __future__ import annotations

import hashlib
import re

from controlplane.kubernetes.chain_cut import wire_prefix
from controlplane.kubernetes.chain_edges import entry_nfs, exit_nfs
from controlplane.kubernetes.service_chain import ChainPort
from controlplane.planning.placement import PlacementError
from controlplane.spec.ports import LAB_RING_FRAMES


def port_of(end) -> str | None:
    """The port a chain's `from` (a name, or {port, source}) or `to` names."""
    return end.get("port") if isinstance(end, dict) else end


def pinned_nfs(chains: list[dict], ports: list[ChainPort]) -> dict[str, tuple[str, str]]:
    """NF -> (node, port) for each chain's NFs that take from its `from` port (those nothing else feeds) and that send
    to its `to` port (those that feed nothing else); PlacementError where one NF would have to be on two nodes."""
    node_of = {port.name: port.node for port in ports}
    pins: dict[str, tuple[str, str]] = {}
    for chain in chains:
        ends = {"from": entry_nfs(chain), "to": exit_nfs(chain)}
        for end, nfs in ends.items():
            port = port_of(chain.get(end))
            if port is None:
                continue
            for nf in nfs:
                if nf in pins and pins[nf][0] != node_of[port]:
                    raise PlacementError(
                        f"chain {chain['name']}: NF {nf} would run on node {pins[nf][0]} (port {pins[nf][1]}) and "
                        f"on node {node_of[port]} (port {port}): a chain whose ports are on two nodes needs an NF on "
                        "each (pinned NF constraint)"
                    )
                pins[nf] = (node_of[port], port)
    return pins


# A port's name on its agent: the resource's wire prefix (`w`, a digest, '-'), the life, "-p" and the resource's name.
_AGENT_PORT_NAME = re.compile(r"^(w[0-9a-f]{8}-)(\d+)-p(.+)$")


def agent_port_name(resource: str, port: str, life: int) -> str:
    """The port's name on its agent in the resource's `life`-th addition there (agent_names.py), at most 32
    characters; a wire's name has its placement's nonce where this has the life, and a digit after its '-'."""
    return f"{wire_prefix(resource)}{life}-p{port}"


def next_port_life(resource: str, taken: list[str]) -> int:
    """The first life after every one whose port names (of the resource's) an agent's ports `taken` show."""
    found = [_AGENT_PORT_NAME.match(name) for name in taken]
    lives = [int(match.group(2)) for match in found if match and match.group(1) == wire_prefix(resource)]
    return max(lives) + 1 if lives else 0


def shown_port(name: str) -> str:
    """A port as the resource names it, from its name on an agent (a wire's name as it is)."""
    found = _AGENT_PORT_NAME.match(name)
    return found.group(3) if found else name


def agent_port(name: str, port: ChainPort) -> dict:
    """The port as its node's agent adds it (a spec's `ports` entry): the interface through net_af_packet."""
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]  # DPDK's device names take no '-' or '.'
    device = f"net_af_packet_p{digest},iface={port.interface},framecnt={LAB_RING_FRAMES}"
    return {"name": name, "device": device, "unhandled": port.unhandled}


def with_agent_ports(chain: dict, names: dict[str, str]) -> dict:
    """The chain with its `from` and `to` naming its ports as the agents name them (`names`: port -> agent's name);
    a chain fed by a port has no traffic of its own there (its rate was placement's)."""
    entry = dict(chain)
    if chain.get("from") is not None:
        entry.pop("traffic", None)
    rename_ends(entry, names)
    return entry


def rename_ends(entry: dict, names: dict[str, str]) -> None:
    """The chain's `from` and `to`, where `names` has them, renamed as it says (a wire's name is in none)."""
    source = entry.get("from")
    if isinstance(source, dict) and source.get("port") in names:
        entry["from"] = source | {"port": names[source["port"]]}
    elif isinstance(source, str) and source in names:
        entry["from"] = names[source]
    if entry.get("to") in names:
        entry["to"] = names[entry["to"]]
