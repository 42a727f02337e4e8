"""What `./tandem ctl status` prints: a running service's chains, NFs, lab hosts, live changes, and what it lost."""

from __future__ import annotations

from controlplane.launch.control_api import Status
from controlplane.terminal.tables import count, number, table


def status_text(status: Status) -> str:
    by_core = ", ".join(f"core {core}: {name}" for core, name in sorted(status.scheduler_by_core.items()))
    scheduler = f"{status.scheduler} ({by_core})" if by_core else status.scheduler
    parts = [f"{status.name} under {scheduler}: {status.phase} at {status.t_s:.1f} s", ""]
    # Only where the generator fell behind: a column of zeros on every healthy service would be noise.
    fell_behind = any(c.generator_fell_behind for c in status.chains)
    parts.append(
        table(
            ["chain", "in", "delivered", "Mpps now", "p50 us under", "p99 us under", "shed at entry"]
            + (["generator fell behind"] if fell_behind else []),
            [
                [
                    f"{c.name} (removed)" if c.removed else c.name,
                    count(c.generated),
                    count(c.delivered),
                    number(c.delivered_mpps, 3),
                    number(c.latency_p50_us_under, 0),
                    number(c.latency_p99_us_under, 0),
                    count(c.entry_backpressure),
                ]
                + ([count(c.generator_fell_behind)] if fell_behind else [])
                for c in status.chains
            ],
        )
    )
    parts.append("")
    parts.append(
        table(
            ["NF", "chain", "pid", "core", "in", "Mpps now", "dropped", "restarts"],
            [
                [
                    n.name,
                    n.chain,
                    "removed" if n.removed else "down" if n.down else n.pid,
                    n.core,
                    count(n.packets_in),
                    number(n.in_mpps, 3),
                    count(n.packets_dropped),
                    n.restarts,
                ]
                for n in status.nfs
            ],
        )
    )
    if status.lab:
        parts.append("\nlab hosts (run your own clients with: ip netns exec NETNS COMMAND):")
        parts += [f"  {h.get('name')}: netns {h.get('netns')}, address {h.get('address')}" for h in status.lab]
    if status.changes:
        parts.append("\nlive changes:")
        parts += [change_line(change) for change in status.changes]
    if status.chains:  # none before the data plane's first report: nothing to say of losses yet
        parts.append("\n" + losses_line(status))
    return "\n".join(parts)


def change_line(change: dict) -> str:
    """One live change as `status` lists it: when it was asked for, what, and what it cost (or why it was refused)."""
    what = next((change[key] for key in ("nf", "chain", "port", "scheduler") if change.get(key)), "")
    outcome = change.get("state", "?")
    if outcome == "refused":
        outcome += ": " + "; ".join(error.get("message", "") for error in change.get("errors", []))
    else:
        drops = change.get("ring_drops_during") or 0
        outcome += f", {count(drops)} ring drops during{by_ring(change.get('ring_drops_by_ring') or {})}"
        if cost := change.get("cost"):
            outcome += "; " + dip_text(cost)
            # Due while the change stalled the control core, never generated: in no drop count above.
            if given_up := cost.get("generator_fell_behind_in_window"):
                outcome += f", {count(given_up)} packets the generator gave up, too far behind"
    # When it was asked for; a refused change, when it was answered (at once).
    at = change.get("t_requested", change.get("t_done"))
    return f"  t={number(at, 2)} s {change.get('op')} {what}: {outcome}"


def dip_text(cost: dict) -> str:
    """A change's dip and latency spike, set against the delivery before it; where nothing was delivered before
    (the traffic had not started, had ended, or had stalled), there is no rate to fall short of."""
    latency = f"latency max {number(cost.get('latency_max_during_us'), 0)} us"
    if cost.get("deficit_ms") is None:
        return f"no delivery before it to measure a dip against, {latency}"
    before = number(cost.get("latency_max_before_us"), 0)
    return f"delivery short by {number(cost['deficit_ms'], 1)} ms of its rate, {latency} (before: {before})"


def losses_line(status: Status) -> str:
    """What the service lost so far, or that it lost nothing: packets full rings dropped, packets shed at a chain's
    entry (backpressure, by plan), and crashed NFs (the packets each held are counted lost at its crash, by name, in
    the results). An NF's own drops (a firewall's denies) are its decisions, in the NF table, not losses."""
    losses = []
    if status.drops_by_ring:
        losses.append(f"full rings dropped {count(sum(status.drops_by_ring.values()))}{by_ring(status.drops_by_ring)}")
    if shed := sum(chain.entry_backpressure for chain in status.chains):
        losses.append(f"{count(shed)} shed at the chains' entries by backpressure")
    crashed = [nf for nf in status.nfs if nf.restarts or nf.down]
    if crashed:
        names = ", ".join(f"{nf.name} ({'down' if nf.down else f'restarted {nf.restarts}x'})" for nf in crashed)
        losses.append(f"NFs crashed: {names}; what each held is counted lost at its crash (the results name it)")
    if not losses:
        return "lost so far: nothing (no full ring dropped a packet, nothing shed at an entry, no NF crashed)"
    return "lost so far: " + "; ".join(losses)


def rings_and_drops(drops: dict[str, int]) -> str:
    """Drops by ring, as "ring n, ring n"."""
    return ", ".join(f"{ring} {count(n)}" for ring, n in drops.items())


def by_ring(drops: dict[str, int]) -> str:
    """A change's ring drops by ring, as a parenthesis after their total; nothing where no ring dropped."""
    return f" ({rings_and_drops(drops)})" if drops else ""
