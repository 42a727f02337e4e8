"""The VM's two speeds: which runs of a comparison ran in its slow mode, told by what the chains' first NFs paid."""

from __future__ import annotations

# On our VM, runs fall into a fast and a slow mode (README, Results). The first NF of a chain reads every frame
# fresh from the control core, and in the slow mode pays 22-43 more cycles a packet for it (light NFs: 61-74
# fast, 84-105 slow; medium: 161-171 fast, 185-201 slow on the AMD guest). A run more than this many cycles above
# the cheapest run of the same first NF ran slow. The scheduler moves that cost too (on the Intel guest rtc's first
# NF pays ~15 cycles more than coop's in the same rounds), so compare takes each scheduler's runs as their own
# reference; the benchmarks pass one from their wider set of runs.
SLOW_MODE_EXTRA_CYCLES = 16.0


def cheapest_entry_cost(runs: list[dict]) -> float | None:
    """The lowest first-NF cost among run summaries; None if none was measured."""
    return min((c for r in runs if (c := r.get("entry_nf_cycles_per_packet"))), default=None)


def slow_runs(runs: list[dict], fastest: float | None = None) -> list[bool | None]:
    """Per run summary: whether it ran in the VM's slow mode; None where the first NFs' cost is unknown.
    `fastest`: the cheapest first-NF cost known for these NFs; by default the cheapest among `runs`, so if every
    run was slow none is flagged: pass a reference from a wider set of runs where there is one."""
    if fastest is None:
        fastest = cheapest_entry_cost(runs)
    costs = [r.get("entry_nf_cycles_per_packet") for r in runs]
    return [None if not c else c > fastest + SLOW_MODE_EXTRA_CYCLES for c in costs]


def same_mode(a: bool | None, b: bool | None) -> bool:
    """Whether two runs are known to have run in one mode (a pair of them compares schedulers, not the host)."""
    return a is not None and a == b
