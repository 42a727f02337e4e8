"""What a comparison of schedulers compares (each run's summary, the compute bound) and its text and CSV reports."""

from __future__ import annotations

import csv
import io
import statistics

from controlplane.results.comparison_rounds import (
    NOISY_SPREAD,
    best_rtc_by_round,
    noisy,
    noisy_names,
    rounds_of,
    rtc_by_round,
    scheduler_rounds,
    slow_modes,
    spread,
)
from controlplane.results.lab_comparison import lab_comparison_report
from controlplane.results.lab_summary import lab_summary
from controlplane.results.machine_modes import SLOW_MODE_EXTRA_CYCLES
from controlplane.terminal.tables import count, number, table

NOISE_MARK = "!"  # beside a noisy scheduler's spread, and before the sentence that says what it means
MODES_MARK = "~"  # before the sentence that says the VM ran in both its modes, and what that did to the ratios
# A ratio to rtc that moves by this much when the rounds run in two modes are left out was moved by the host.
MODE_SHIFT = 0.05


def run_summary(results: dict) -> dict:
    """The numbers a comparison puts side by side, from one run's results."""
    chains = results["chains"]
    latencies = [c["latency_us"] for c in chains if c["latency_us"].get("samples")]
    workers = results["workers"]

    def switches(w):
        os_counters = w["os"]
        if "voluntary_switches_per_s" not in os_counters:
            return None
        return os_counters["voluntary_switches_per_s"] + os_counters.get("involuntary_switches_per_s", 0)

    per_worker = [switches(w) for w in workers]
    lab = lab_summary(results["lab"], (results.get("lab_cpu") or {}).get("busy_cores")) if "lab" in results else {}
    return lab | {
        "delivered_mpps": sum(c["window"]["delivered_mpps"] for c in chains),
        "offered_mpps": sum(c["window"]["offered_mpps"] for c in chains),
        # The worst chain's latency: a scheduler that starves one chain must not hide behind another.
        "p50_us": max((latency["p50"] for latency in latencies), default=None),
        "p99_us": max((latency["p99"] for latency in latencies), default=None),
        "dropped": sum(c["dropped"]["total"] for c in chains),
        "context_switches_per_s": None if None in per_worker else sum(per_worker),
        "accounting_exact": all(c["accounting_exact"] for c in chains) and results["accounting"]["exact"],
        "hop_errors": sum(c["hop_errors"] for c in chains),
        # What the chains' first NFs pay a packet: they take every frame fresh from the control core, so this
        # shows what the host's memory system costs in this run (the benchmarks tell the VM's modes apart by it).
        "entry_nf_cycles_per_packet": _entry_nf_cost(results),
        "compute_bound_mpps": compute_bound_mpps(results),
    }


def compute_bound_mpps(results: dict) -> float | None:
    """The compute-only bound (issue 20): what the NF cores could deliver if they did nothing but the NFs' work,
    at this run's measured cycles a packet. Per core, the cycles a delivered packet costs there (each NF's cycles
    a packet times the packets it took in per delivered one); the busiest core bounds the total. None where a cost
    or the clock is unknown, or nothing was delivered."""
    delivered = sum(c["window"]["delivered_mpps"] for c in results["chains"])
    hz = results.get("tsc_hz")
    if not delivered or not hz:
        return None
    per_core: dict[int, float] = {}
    for nf in results["nfs"]:
        cost = nf["window"].get("cycles_per_packet")
        if cost is None:
            return None
        per_core[nf["core"]] = per_core.get(nf["core"], 0.0) + cost * nf["window"]["in_mpps"] / delivered
    busiest = max(per_core.values(), default=0.0)
    return hz / busiest / 1e6 if busiest else None


def _entry_nf_cost(results: dict) -> float | None:
    names = {chain["nfs"][0] for chain in results["chains"] if chain.get("nfs")}
    costs = [nf["window"].get("cycles_per_packet") for nf in results["nfs"] if nf["name"] in names]
    costs = [c for c in costs if c]
    return statistics.mean(costs) if costs else None


def median_of(values):
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def comparison_bound(comparison: dict) -> tuple[float | None, str]:
    """The comparison's compute-only bound and whose runs it comes from: rtc's (the least disturbed NF costs) where
    it ran, otherwise every scheduler's runs; the median of the runs' bounds."""
    rtc_runs = comparison["schedulers"].get("rtc", {}).get("runs") or []
    source, runs = (
        ("rtc's runs", rtc_runs)
        if rtc_runs
        else ("every run", [r for e in comparison["schedulers"].values() for r in e["runs"]])
    )
    return median_of([r.get("compute_bound_mpps") for r in runs]), source


def comparison_report(comparison: dict) -> str:
    rows = []
    bound, bound_source = comparison_bound(comparison)
    best_rtc = (comparison.get("ceilings") or {}).get("best_rtc") or {}
    for name, entry in comparison["schedulers"].items():
        median = entry["median"]
        if not median:
            rows.append([name, "failed", "", "", "", "", "", "", "", "", entry.get("error", "")])
            continue
        figures = scheduler_rounds(comparison, name)
        of_bound = f"{median['delivered_mpps'] / bound:.1%}" if bound else "n/a"
        runs = entry["runs"]
        rows.append(
            [
                name,
                number(median["delivered_mpps"], 3),
                spread_cell(figures["spread"], figures["noisy"]),
                share(figures["median_vs_rtc"]),
                share(figures["median_vs_best_rtc"]),
                of_bound,
                number(median["p50_us"], 1),
                number(median["p99_us"], 1),
                count(median["dropped"]),
                "n/a" if median["context_switches_per_s"] is None else count(median["context_switches_per_s"]),
                f"{sum(r['accounting_exact'] for r in runs)}/{len(runs)} exact",
            ]
        )
    per_batch = len(next(iter((best_rtc.get("runs_by_batch") or {}).values()), []))
    header = (
        f"{comparison['spec_name']}: median of {comparison['repeat']} runs of "
        + (f"{comparison['duration_s']} s each " if comparison["duration_s"] else "its lab's length each ")
        + f"on {comparison['machine']}\n"
        "spread: fastest run over slowest; vs rtc: the median over rounds of each run against rtc's run in the same "
        "round (batches of the spec's burst); vs best rtc: the same against the best of rtc over batches "
        + (
            f"{min(map(int, best_rtc['by_batch']))}...{max(map(int, best_rtc['by_batch']))}, "
            f"{best_rtc['mpps']:.2f} Mpps at batch {best_rtc['batch']} "
            + (f"(median of {per_batch} runs each, in the same rounds)" if per_batch else "(one run each)")
            if best_rtc.get("mpps")
            else f"32...1024 ({best_rtc.get('unavailable') or 'not run'})"
        )
        + "; vs bound: the median rate against the compute-only bound, "
        + (
            f"{bound:.2f} Mpps (core cycles / the NFs' cycles a packet on the busiest core, from {bound_source})"
            if bound
            else "unknown (no run measured every NF's cycles a packet)"
        )
    )
    body = table(
        [
            "scheduler",
            "Mpps",
            "spread",
            "vs rtc",
            "vs best rtc",
            "vs bound",
            "p50 us",
            "p99 us",
            "dropped",
            "cs/s",
            "accounting",
        ],
        rows,
    )
    lab = comparison.get("kernel") is not None or any(
        (entry.get("median") or {}).get("lab_commands_met") is not None for entry in comparison["schedulers"].values()
    )
    return (
        header
        + "\n\n"
        + body
        + noise_note(comparison)
        + mode_note(comparison)
        + ("\n\n" + lab_comparison_report(comparison) if lab else "")
    )


def share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def spread_cell(ratio: float | None, is_noisy: bool) -> str:
    """A scheduler's spread, with the noise marker when its runs disagree by more than NOISY_SPREAD."""
    text = "n/a" if ratio is None else f"{ratio:.2f}x"
    return f"{text} {NOISE_MARK}" if is_noisy else text


def noise_note(comparison: dict) -> str:
    """The sentence under the table when a scheduler's runs (or the best rtc's) disagree by more than NOISY_SPREAD."""
    found = noisy_names(comparison)
    if not found:
        return ""
    which = ", ".join(f"{name} ({'n/a' if s is None else f'{s:.1f}x'})" for name, s in found)
    return (
        f"\n\n{NOISE_MARK} The runs of {which} differ by more than {NOISY_SPREAD}x: the machine changed speed between "
        "runs, so the medians (Mpps, vs bound) are no ranking; trust vs rtc and vs best rtc (ratios inside one round), "
        "or run again with a larger --repeat on a quiet machine."
    )


def mode_note(comparison: dict) -> str:
    """The sentence under the table when some runs ran in the VM's slow mode (machine_modes): which, and each
    scheduler's vs rtc over every round and over the rounds where its run and rtc's ran in one mode, and which
    moved."""
    modes = slow_modes(comparison)
    slow = {
        name: [round_ for round_, flag in zip(rounds_of(entry["runs"]), modes[name], strict=True) if flag]
        for name, entry in comparison["schedulers"].items()
    }
    if not any(slow.values()):
        return ""
    which = "; ".join(
        f"{name} in round{'s' if len(rounds) > 1 else ''} {', '.join(map(str, rounds))}"
        for name, rounds in slow.items()
        if rounds
    )
    text = (
        f"\n\n{MODES_MARK} Runs in the VM's slow mode (their first NFs paid over "
        f"{SLOW_MODE_EXTRA_CYCLES:.0f} cycles a packet above the same scheduler's cheapest run: the host's memory, not "
        f"the scheduler): {which}. A run against rtc's of its round in the other mode compares the host."
    )
    if "rtc" not in comparison["schedulers"]:
        return text + " Run rtc beside them for ratios that leave those rounds out."
    parts = []
    for name in comparison["schedulers"]:
        figures = scheduler_rounds(comparison, name)
        every, same = figures["median_vs_rtc"], figures["median_vs_rtc_same_mode"]
        if name == "rtc" or every is None:
            continue
        rounds = sum(r is not None for r in figures["vs_rtc"])
        if same is None:
            parts.append(f"{name} {share(every)} (no round in one mode)")
            continue
        kept = sum(r is not None for r in figures["vs_rtc_same_mode"])
        moved = same - every
        verdict = f"the modes moved it {100 * moved:+.0f} points" if abs(moved) >= MODE_SHIFT else "the scheduler's"
        parts.append(f"{name} {share(every)}, {share(same)} over {kept} of {rounds} rounds: {verdict}")
    return (
        text
        + " vs rtc over every round, then over the rounds in one mode only: "
        + "; ".join(parts)
        + f". A ratio that moves by {MODE_SHIFT:.0%} or more is the host's; one that does not is the scheduler's."
    )


CSV_COLUMNS = [
    "scheduler",
    "run",
    "round",
    "batch",
    "delivered_mpps",
    "vs_rtc",
    "vs_best_rtc",
    "slow_mode",
    "spread",
    "noisy",
    "offered_mpps",
    "p50_us",
    "p99_us",
    "dropped",
    "context_switches_per_s",
    "accounting_exact",
    "hop_errors",
    "error",
]


def comparison_csv(comparison: dict) -> str:
    """One row per run and scheduler, the table's columns unrounded: what a spreadsheet or pandas loads. vs_rtc and
    vs_best_rtc divide by rtc's run of the same round (compare runs every scheduler and every batch size of the
    best-rtc sweep once a round); spread and noisy are the scheduler's, on each of its rows. The sweep's runs follow
    as `rtc batch N` (their batch in `batch`; only the rate is kept of them). A cell the run could not measure is
    empty, and a scheduler whose runs failed gets a row with its error."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for name, entry in comparison["schedulers"].items():
        figures = scheduler_rounds(comparison, name)
        for index, run in enumerate(entry["runs"]):
            writer.writerow(
                [
                    name,
                    index + 1,
                    rounds_of(entry["runs"])[index],
                    None,
                    run["delivered_mpps"],
                    figures["vs_rtc"][index],
                    figures["vs_best_rtc"][index],
                    figures["slow_mode"][index],
                    figures["spread"],
                    figures["noisy"],
                    run["offered_mpps"],
                    run["p50_us"],
                    run["p99_us"],
                    run["dropped"],
                    run["context_switches_per_s"],
                    run["accounting_exact"],
                    run.get("hop_errors"),
                    "",
                ]
            )
        if entry.get("error"):
            writer.writerow([name, len(entry["runs"]) + 1] + [None] * (len(CSV_COLUMNS) - 3) + [entry["error"]])
    writer.writerows(sweep_rows(comparison))
    return out.getvalue()


def sweep_rows(comparison: dict) -> list[list]:
    """The best-rtc sweep's runs as CSV rows, a row per batch size and round."""
    best = (comparison.get("ceilings") or {}).get("best_rtc") or {}
    rtc, best_by_round = rtc_by_round(comparison), best_rtc_by_round(best)
    rows = []
    for batch, rates in (best.get("runs_by_batch") or {}).items():
        for index, mpps in enumerate(rates):
            base, top = rtc.get(index + 1), best_by_round.get(index + 1) if isinstance(best_by_round, dict) else None
            rows.append(
                [f"rtc batch {batch}", index + 1, index + 1, batch, mpps]
                + [mpps / base if mpps is not None and base else None, mpps / top if mpps is not None and top else None]
                + [None, spread(rates), noisy(rates)]  # a sweep run keeps only its rate: its mode is unknown
                + [None] * (len(CSV_COLUMNS) - 10)
            )
    return rows
