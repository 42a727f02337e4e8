"""What a lab's clients measured, summed up for a comparison: TCP goodput and retransmits (iperf3), round trips
(ping), whether every command did what the spec expects, and the machine's busy cores meanwhile."""

from __future__ import annotations

import statistics

# The fields lab_summary gives, each None where no command measured it.
LAB_FIELDS = (
    "lab_goodput_gbps",
    "lab_retransmits",
    "lab_rtt_p50_us",
    "lab_rtt_p99_us",
    "lab_ping_loss_percent",
    "lab_busy_cores",
    "lab_commands_met",
)


def lab_summary(records: list[dict], busy_cores: float | None) -> dict:
    """From the commands' records (controlplane/machine/lab_commands.py) and the busy cores while the clients ran."""
    figures = [record["figures"] for record in records]

    def summed(key: str, scale: float = 1.0):
        values = [f[key] for f in figures if key in f]
        return sum(values) * scale if values else None

    def mean(key: str, scale: float = 1.0):
        values = [f[key] for f in figures if key in f]
        return statistics.fmean(values) * scale if values else None

    return {
        "lab_goodput_gbps": summed("goodput_bps", 1e-9),
        "lab_retransmits": summed("retransmits"),
        "lab_rtt_p50_us": mean("rtt_p50_ms", 1e3),
        "lab_rtt_p99_us": mean("rtt_p99_ms", 1e3),
        "lab_ping_loss_percent": mean("loss_percent"),
        "lab_busy_cores": busy_cores,
        "lab_commands_met": sum(record["met"] for record in records) / len(records) if records else None,
    }
