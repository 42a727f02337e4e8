"""The hops a ServiceChain's status lists: each ring into an NF on a node, as its agent counts it, and each wire
between two parts of a cut chain, as its two ends count it (its frames numbered: the gaps are what it lost)."""

from __future__ import annotations

from controlplane.kubernetes.chain_cut import Wire
from controlplane.kubernetes.chain_edges import edges_of, entry_nfs
from controlplane.kubernetes.chain_ports import port_of, shown_port
from controlplane.launch.control_api import Status


def hops_of(chain: dict) -> list[tuple[str, str]]:
    """(from, to) of each ring into an NF of a chain (a spec's `chains` entry): from `entry` into its first NFs (a
    graph's NFs that no edge feeds), then along its line or its graph's edges."""
    return [("entry", name) for name in entry_nfs(chain)] + edges_of(chain)


def ring_hops(node: str, chain: dict, status: Status, prefix: str) -> list[dict]:
    """The rings into the chain's NFs on `node`: the NF's rate in (from every ring into it) and what the full ring
    dropped. A chain fed by a port has that port as its entry (a cut chain's later part: the wire's)."""
    running = {nf.name: nf for nf in status.nfs if not nf.removed}
    hops = []
    for source, target in hops_of(chain):
        if target not in running:
            continue
        ring = f"{chain['name']}:entry" if source == "entry" else f"{chain['name']}:{source}->{target}"
        shown = shown_port(port_of(chain.get("from")) or source) if source == "entry" else source.removeprefix(prefix)
        hops.append(
            {
                "from": shown,
                "to": target.removeprefix(prefix),
                "node": node,
                "rateMpps": round(running[target].in_mpps or 0.0, 6),
                "dropped": int(status.drops_by_ring.get(ring, 0)),
            }
        )
    return hops


def wire_counts(status: Status | None, wire: Wire) -> dict | None:
    """The wire's counters at one end (its port's `wire` report), or None where that end did not answer."""
    if status is None:
        return None
    return next((port.get("wire") for port in status.ports if port.get("name") == wire.name), None)


def wire_hop(
    wire: Wire,
    statuses: dict[str, Status | None],
    earlier: dict[str, tuple[float, int]],
    now: float,
) -> dict | None:
    """The wire from the exit of the part before it to the entry of the part after it: the rate it carried
    since the last reading (`earlier`: wire -> (when, frames received), updated here), what it lost (the gaps the
    receiver found, and what the sender could not number for want of room), and its mean one-way delay as the two
    hosts' clocks agree (CLOCK_REALTIME stamps: a skew between them shows here, even below zero). None until a
    second reading gives a rate, or where an end did not answer."""
    received_at, sent_at = wire_counts(statuses.get(wire.receiver), wire), wire_counts(statuses.get(wire.sender), wire)
    if received_at is None or sent_at is None:
        return None
    before = earlier.get(wire.name)
    earlier[wire.name] = (now, received_at["received"])
    if before is None or now <= before[0]:
        return None
    delay = received_at.get("delay") or {}
    return {
        "from": wire.source_nf,
        "to": wire.target_nf,
        "node": "wire",
        "rateMpps": round(max(received_at["received"] - before[1], 0) / (now - before[0]) / 1e6, 6),
        "dropped": int(received_at["lost"] + sent_at["no_room"]),
        "delayUs": round(delay["mean_ns"] / 1e3, 3) if "mean_ns" in delay else None,
    }
