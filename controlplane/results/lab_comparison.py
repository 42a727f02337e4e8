"""A lab comparison's own table: per scheduler, and for the kernel doing the same work, what the lab's clients
measured (goodput, retransmits, round trips), the machine's busy cores meanwhile, and each against the kernel's."""

from __future__ import annotations

from controlplane.terminal.tables import number, table


def _ratio(value: float | None, anchor: float | None) -> str:
    return f"{value / anchor:.2f}x" if value is not None and anchor else "n/a"


def lab_comparison_report(comparison: dict) -> str:
    kernel = comparison.get("kernel") or {}
    anchor = kernel.get("median") or {}
    rows = []
    entries = [(name, entry.get("median") or {}) for name, entry in comparison["schedulers"].items()]
    if anchor:
        entries.append(("kernel", anchor))
    if (kernel.get("offloads_on") or {}).get("median"):
        entries.append(("kernel, offloads on", kernel["offloads_on"]["median"]))
    for name, median in entries:
        met = median.get("lab_commands_met")
        rows.append(
            [
                name,
                number(median.get("lab_goodput_gbps"), 2),
                _ratio(median.get("lab_goodput_gbps"), anchor.get("lab_goodput_gbps")),
                number(median.get("lab_retransmits"), 0),
                number(median.get("lab_rtt_p50_us"), 0),
                number(median.get("lab_rtt_p99_us"), 0),
                _ratio(median.get("lab_rtt_p50_us"), anchor.get("lab_rtt_p50_us")),
                number(median.get("lab_busy_cores"), 2),
                "n/a" if met is None else f"{met:.0%}",
            ]
        )
    rules = next((run.get("rules") for run in kernel.get("runs", [])), None)
    note = (
        f"the kernel: the same hosts and commands, a Linux bridge between their veths with the chains' firewall rules "
        f"in nftables ({rules} rules a frame walks at most), offloads off as on Tandem's veths (and, a row of its "
        "own, with the kernel's default offloads: TSO, GSO and GRO make 64 KB super-frames, which Tandem cannot carry)"
        if anchor
        else f"the kernel: not run ({kernel.get('unavailable', 'not a lab')})"
    )
    headers = ["lab", "goodput Gbps", "vs kernel", "retransmits", "ping p50 us", "ping p99 us", "p50 vs kernel"]
    headers += ["busy cores", "as expected"]
    return (
        f"what the lab's clients measured (medians of {comparison['repeat']} runs); {note}; busy cores: the whole "
        "machine's while the clients ran (Tandem's pollers busy-wait, so its cores count whole)\n\n"
        + table(headers, rows)
    )
