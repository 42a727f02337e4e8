"""Runs one spec under several schedulers, several times each, and summarises the medians side by side."""

from __future__ import annotations

import sys

from controlplane.errors import EXIT_INTERRUPTED, EXIT_OK, TandemError
from controlplane.experiment import pipeline
from controlplane.machine.description import machine_description
from controlplane.results.comparison_report import median_of, run_summary
from controlplane.results.live_metrics import RunCollector
from controlplane.spec.deployment import run_config
from controlplane.spec.models import Spec
from controlplane.terminal.progress import ProgressLine

# The batch sizes of the comparison's second ceiling: rtc with batches of the spec's burst is no ceiling (bubble's
# larger batches beat it by 20-50 %), the best of rtc over these is.
CEILING_BATCHES = (32, 64, 128, 256, 512, 1024)

SUMMARY_FIELDS = (
    "delivered_mpps",
    "offered_mpps",
    "p50_us",
    "p99_us",
    "dropped",
    "context_switches_per_s",
    "compute_bound_mpps",
)


def compare(
    spec: Spec,
    source: str,
    schedulers: list[str],
    repeat: int,
    duration: float | None,
    quiet: bool = False,
    metrics: RunCollector | None = None,
    profile: bool = False,
    ceiling: bool = True,
) -> tuple[dict, int]:
    """Returns the comparison and an exit status (0, 1 if any run failed, 130 if interrupted). With `metrics`, each
    run reports its counters live, and the collector serves the run in progress; with `profile`, each run traces
    packets hop by hop (latency_breakdown in its chains' results); with `ceiling`, rtc runs once at each batch size
    of CEILING_BATCHES after the comparison, and the best is its second ceiling (`ceilings.best_rtc`)."""
    run_duration = duration if duration is not None else spec.duration
    comparison = {
        "spec_name": spec.name,
        "spec": source,
        "machine": machine_description(),
        "repeat": repeat,
        "duration_s": run_duration,
        "warmup_s": spec.warmup,
        "schedulers": {name: {"runs": [], "results": [], "median": None} for name in schedulers},
    }
    status = EXIT_OK
    # Round-robin over the schedulers rather than all repeats of one, then the next: this VM's speed drifts over
    # minutes, and interleaving spreads the drift over every scheduler instead of loading it onto one.
    for attempt in range(repeat):
        if status == EXIT_INTERRUPTED:
            break
        for name in schedulers:
            entry = comparison["schedulers"][name]
            config = run_config(spec, name, duration)
            if profile:
                with_profiling(config)
            label = f"[{name} {attempt + 1}/{repeat}] "
            progress = ProgressLine(label, config["warmup"] + config["duration"]) if not quiet else None
            observers = [progress] if progress else []
            if metrics is not None:
                observers.append(metrics.follow(config, f"{name}#{attempt + 1}", spec.name))
            outcome = pipeline.run(config, source, fan_out(observers))
            if progress:
                progress.finish()
            for note in outcome.notes:
                print(f"{label}{note}", file=sys.stderr)
            if outcome.results is not None and outcome.exit_status == EXIT_OK:
                entry["results"].append(outcome.results)
                entry["runs"].append(run_summary(outcome.results))
            else:
                entry["error"] = outcome.error
                status = outcome.exit_status
                if outcome.exit_status == EXIT_INTERRUPTED:
                    break
    if ceiling and status != EXIT_INTERRUPTED:
        comparison["ceilings"] = {"best_rtc": best_rtc(spec, source, duration, quiet)}
    summarise(comparison)
    return comparison, status


def best_rtc(spec: Spec, source: str, duration: float | None, quiet: bool) -> dict:
    """rtc, the chain run to completion with no switch at all, once at each batch size a chain's rings can hold:
    the best delivered rate and its batch. A spec rtc cannot run (external NFs, kernel-I/O chains) has no such
    ceiling, and says why."""
    capacity = min(chain.ring_capacity or spec.ring_capacity for chain in spec.chains)
    by_batch: dict[int, float | None] = {}
    for batch in (b for b in CEILING_BATCHES if b <= capacity):
        config = dict(run_config(spec, "rtc", duration), burst=batch)
        progress = ProgressLine(f"[rtc, batch {batch}] ", config["warmup"] + config["duration"]) if not quiet else None
        try:
            outcome = pipeline.run(config, source, progress)
        except TandemError as error:
            return {"mpps": None, "batch": None, "by_batch": by_batch, "unavailable": str(error).splitlines()[-1]}
        finally:
            if progress:
                progress.finish()
        by_batch[batch] = (
            run_summary(outcome.results)["delivered_mpps"]
            if outcome.results and outcome.exit_status == EXIT_OK
            else None
        )
        if outcome.exit_status == EXIT_INTERRUPTED:
            break
    measured = [(mpps, batch) for batch, mpps in by_batch.items() if mpps]
    best_mpps, best_batch = max(measured) if measured else (None, None)
    return {
        "mpps": best_mpps,
        "batch": best_batch,
        "by_batch": by_batch,
        "skipped": [b for b in CEILING_BATCHES if b > capacity],
    }


def summarise(comparison: dict) -> None:
    """Fills each scheduler's median of its runs' summaries."""
    for entry in comparison["schedulers"].values():
        runs = entry["runs"]
        if runs:
            entry["median"] = {field: median_of([r[field] for r in runs]) for field in SUMMARY_FIELDS}


def with_profiling(config: dict, counters: bool = True) -> None:
    """run --profile: traced packets (the latency breakdown) and, with `counters`, each NF process's perf counters (a
    probe; its system-call tracepoint taxes every call an NF makes, which a yielding NF makes by the million)."""
    config["profile"] = dict(config.get("profile") or {}, hops={}) | ({"perf_counters": {}} if counters else {})


def fan_out(observers: list):
    """One event callback that hands each event to every observer in turn; None when there are none."""
    if not observers:
        return None

    def observe(event: dict) -> None:
        for observer in observers:
            observer(event)

    return observe
