"""A comparison round by round: how far each scheduler's runs spread (noisy above 1.5x), each run against rtc's run
of the same round (over every round, and over the rounds where both ran in one mode of the VM), and the best-rtc
sweep's per-batch medians."""

from __future__ import annotations

import statistics

from controlplane.results.machine_modes import same_mode, slow_runs

# Runs of one scheduler more than this far apart (fastest over slowest delivered rate) say that the machine changed
# speed between them: the median of a few such runs is whichever speed it landed on, not the scheduler's.
NOISY_SPREAD = 1.5


def spread(values: list[float | None]) -> float | None:
    """The fastest of `values` over the slowest; None with fewer than two measured, or a slowest of zero."""
    present = [v for v in values if v is not None]
    if len(present) < 2 or min(present) <= 0:
        return None
    return max(present) / min(present)


def noisy(values: list[float | None]) -> bool:
    """Whether runs of one thing disagree by more than NOISY_SPREAD; a run that delivered nothing beside one that
    delivered is noisy too (no spread to give)."""
    present = [v for v in values if v is not None]
    ratio = spread(present)
    if ratio is None:
        return len(present) >= 2 and max(present) > 0 >= min(present)
    return ratio > NOISY_SPREAD


def rounds_of(runs: list[dict]) -> list[int]:
    """Each run's round (1-based): its own `round` where every run has a distinct one, else its position (runs made
    before rounds were recorded, or merged from several comparisons)."""
    given = [run.get("round") for run in runs]
    if None not in given and len(set(given)) == len(given):
        return given
    return list(range(1, len(runs) + 1))


def round_ratios(runs: list[dict], reference: dict[int, float | None] | float | None) -> list[float | None]:
    """Each run's delivered rate over the reference's in the same round (`reference`: rate by round, or one rate for
    every round where no per-round runs are known); None where either is missing."""
    ratios = []
    for round_, run in zip(rounds_of(runs), runs, strict=True):
        base = reference.get(round_) if isinstance(reference, dict) else reference
        mpps = run.get("delivered_mpps")
        ratios.append(mpps / base if mpps is not None and base else None)
    return ratios


def rtc_by_round(comparison: dict) -> dict[int, float | None]:
    """rtc's delivered rate (batches of the spec's burst) by round; empty without rtc."""
    runs = comparison["schedulers"].get("rtc", {}).get("runs") or []
    return {r: run["delivered_mpps"] for r, run in zip(rounds_of(runs), runs, strict=True)}


def best_rtc_by_round(best: dict) -> dict[int, float | None] | float | None:
    """The best batch's rate by round (its runs are in the same rounds as the schedulers'); the best's one rate for a
    sweep that kept no runs (one written before the sweep was interleaved)."""
    sweep = best.get("runs_by_batch") or {}
    runs = sweep.get(best.get("batch")) or sweep.get(str(best.get("batch")))  # a JSON file's keys are text
    if not runs:
        return best.get("mpps")
    return {index + 1: mpps for index, mpps in enumerate(runs)}


def median_or_none(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def sweep_summary(runs_by_batch: dict[int, list[float | None]]) -> dict:
    """The best-rtc ceiling from the sweep's runs: each batch's median over its rounds, the best of those and its
    batch, and how far the best batch's runs spread."""
    by_batch = {batch: median_or_none(runs) for batch, runs in runs_by_batch.items()}
    measured = [(mpps, batch) for batch, mpps in by_batch.items() if mpps]
    best_mpps, best_batch = max(measured) if measured else (None, None)
    best_runs = runs_by_batch.get(best_batch, [])
    return {
        "mpps": best_mpps,
        "batch": best_batch,
        "by_batch": by_batch,
        "spread": spread(best_runs),
        "noisy": noisy(best_runs),
    }


def slow_modes(comparison: dict) -> dict[str, list[bool | None]]:
    """Each scheduler's runs: which ran in the VM's slow mode (machine_modes), each against the cheapest first-NF cost
    of the same scheduler's runs: what a first NF pays depends on the scheduler too (on our Intel guest rtc's ~15
    cycles a packet above coop's and unis's in the same rounds), so across schedulers the offset would pass for a
    mode. A scheduler whose runs all ran slow has none flagged."""
    return {name: slow_runs(entry["runs"]) for name, entry in comparison["schedulers"].items()}


def scheduler_rounds(comparison: dict, name: str) -> dict:
    """One scheduler's noise and per-round ratios: spread, noisy, each run's vs_rtc and vs_best_rtc, and their
    medians (None where there is no rtc, or no best rtc); vs_rtc_same_mode: vs_rtc where the run and rtc's of its
    round ran in one mode of the VM (else None), and its median."""
    runs = comparison["schedulers"][name]["runs"]
    rates = [run["delivered_mpps"] for run in runs]
    rtc = rtc_by_round(comparison)
    best = (comparison.get("ceilings") or {}).get("best_rtc") or {}
    vs_rtc = round_ratios(runs, rtc) if rtc else [None] * len(runs)
    vs_best = round_ratios(runs, best_rtc_by_round(best)) if best.get("mpps") else [None] * len(runs)
    modes = slow_modes(comparison)
    rtc_runs = comparison["schedulers"].get("rtc", {}).get("runs") or []
    rtc_mode = dict(zip(rounds_of(rtc_runs), modes.get("rtc", []), strict=True))
    vs_rtc_same_mode = [
        ratio if same_mode(mode, rtc_mode.get(round_)) else None
        for ratio, mode, round_ in zip(vs_rtc, modes[name], rounds_of(runs), strict=True)
    ]
    return {
        "spread": spread(rates),
        "noisy": noisy(rates),
        "vs_rtc": vs_rtc,
        "vs_best_rtc": vs_best,
        "median_vs_rtc": median_or_none(vs_rtc),
        "median_vs_best_rtc": median_or_none(vs_best),
        "slow_mode": modes[name],
        "vs_rtc_same_mode": vs_rtc_same_mode,
        "median_vs_rtc_same_mode": median_or_none(vs_rtc_same_mode),
    }


def summarise_rounds(comparison: dict) -> None:
    """Writes each scheduler's spread and noisy flag, each run's round and ratios, and the ratios' medians (beside the
    rates' medians, as median.vs_rtc and median.vs_best_rtc) into `comparison`."""
    for name, entry in comparison["schedulers"].items():
        figures = scheduler_rounds(comparison, name)
        entry["spread"], entry["noisy"] = figures["spread"], figures["noisy"]
        rounds = rounds_of(entry["runs"])
        for run, round_, vs_rtc, vs_best, slow in zip(
            entry["runs"], rounds, figures["vs_rtc"], figures["vs_best_rtc"], figures["slow_mode"], strict=True
        ):
            run.update(round=round_, vs_rtc=vs_rtc, vs_best_rtc=vs_best, slow_mode=slow)
        if entry.get("median"):
            entry["median"].update(
                vs_rtc=figures["median_vs_rtc"],
                vs_best_rtc=figures["median_vs_best_rtc"],
                vs_rtc_same_mode=figures["median_vs_rtc_same_mode"],
            )


def noisy_names(comparison: dict) -> list[tuple[str, float | None]]:
    """What ran noisy, with its spread: schedulers by name, the sweep's best batch as `rtc batch N`."""
    found = []
    for name in comparison["schedulers"]:
        figures = scheduler_rounds(comparison, name)
        if figures["noisy"]:
            found.append((name, figures["spread"]))
    best = (comparison.get("ceilings") or {}).get("best_rtc") or {}
    if best.get("noisy"):
        found.append((f"rtc batch {best['batch']}", best.get("spread")))
    return found
