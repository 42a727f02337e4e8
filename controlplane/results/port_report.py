"""The text report of a run's ports and lab: what each port received, passed and sent, and what each lab command
did with its own figures (goodput, round trips, requests), as `./tandem run` prints them."""

from __future__ import annotations

from controlplane.terminal.tables import count, number, table


def _device_lost(port: dict) -> str:
    device = port.get("device_counters") or {}
    if device.get("unsupported"):
        return "unsupported"
    lost = {name: device.get(name, 0) for name in ("imissed", "ierrors", "rx_nombuf", "oerrors", "kernel_ring_drops")}
    return ", ".join(f"{name} {count(value)}" for name, value in lost.items() if value) or "0"


def ports_report(ports: list[dict]) -> str:
    rows = [
        [
            port["name"],
            count(port["received"]),
            count(port["to_chains"]),
            count(port["passed"]),
            count(port["unhandled_dropped"]),
            count(port["transmitted"]),
            count(port["tx_refused"]),
            _device_lost(port),
            "yes" if port["exact"] else "NO",
        ]
        for port in ports
    ]
    headers = ["port", "received", "to chains", "passed", "dropped", "sent", "send refused", "device lost", "exact"]
    notes = [
        f"port {port['name']}: the kernel dropped {count(drops)} frames its packet ring had no room for, before "
        "Tandem saw them (a larger framecnt in the device string gives the ring more room)"
        for port in ports
        if (drops := (port.get("device_counters") or {}).get("kernel_ring_drops"))
    ]
    notes += [
        f"port {port['name']}: {count(discarded)} frames were in its socket's ring when it opened, from before the run "
        "(any interface's: DPDK binds the socket late); discarded, never received"
        for port in ports
        if (discarded := port.get("discarded_at_open"))
    ]
    notes += [_wire_note(port) for port in ports if port.get("wire")]
    return "\n".join([table(headers, rows), *notes])


def _wire_note(port: dict) -> str:
    """A wire port's link: what it numbered and sent, what came in numbered, the gaps (what the wire lost)."""
    wire = port["wire"]
    said = [f"sent {count(wire['sent'])} numbered"]
    if wire["no_room"]:
        said.append(f"{count(wire['no_room'])} refused for want of room for the trailer")
    said.append(f"received {count(wire['received'])} in sequence, lost {count(wire['lost'])} on the wire (gaps)")
    said += [f"{name} {count(wire[name])}" for name in ("late", "duplicates", "implausible", "foreign") if wire[name]]
    if delay := wire.get("delay"):
        said.append(f"one-way delay mean {delay['mean_ns'] / 1e3:.1f} us, max {delay['max_ns'] / 1e3:.1f} us")
    return f"port {port['name']} (wire): " + ", ".join(said)


def _figures(figures: dict) -> str:
    """A command's own figures in a few words: iperf3's goodput, ping's replies and round trip, curl's keys."""
    said = []
    if "goodput_bps" in figures:
        said.append(f"{figures['goodput_bps'] / 1e9:.2f} Gbps")
    if "retransmits" in figures:
        said.append(f"{figures['retransmits']} retransmits")
    if "mean_rtt_us" in figures:
        said.append(f"rtt {figures['mean_rtt_us']:.0f} us")
    if "received" in figures and "transmitted" in figures:
        said.append(f"{figures['received']}/{figures['transmitted']} replies")
    if "rtt_p50_ms" in figures:
        said.append(f"rtt p50 {figures['rtt_p50_ms'] * 1e3:.0f} us, p99 {figures['rtt_p99_ms'] * 1e3:.0f} us")
    known = {"goodput_bps", "sent_bps", "retransmits", "mean_rtt_us", "received", "transmitted", "loss_percent"}
    known |= {"rtt_min_ms", "rtt_avg_ms", "rtt_max_ms", "rtt_mdev_ms", "rtt_p50_ms", "rtt_p99_ms"}
    said += [f"{key} {value}" for key, value in figures.items() if key not in known]
    return ", ".join(said)


def _ending(record: dict) -> str:
    if record["timed_out"]:
        return "time limit"
    if record["interrupted"]:
        return "stopped"
    if record["role"] == "serve" and record["exit_status"] is None:
        return "stopped"
    return "exit " + str(record["exit_status"])


def lab_report(records: list[dict]) -> str:
    rows = [
        [
            record["host"],
            record["command"] if len(record["command"]) <= 48 else record["command"][:45] + "...",
            _ending(record),
            "yes" if record["met"] else f"NO (expected {record['expected']})",
            number(record["seconds"], 1),
            _figures(record["figures"]),
        ]
        for record in records
    ]
    return table(["host", "command", "ended", "as expected", "s", "its figures"], rows)
