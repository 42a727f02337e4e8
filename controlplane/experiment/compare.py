"""Runs one spec under several schedulers, in rounds (each scheduler and each batch size of the best-rtc sweep once a
round), and summarises the medians and the per-round ratios side by side."""

from __future__ import annotations

import sys

from controlplane.errors import EXIT_INTERRUPTED, EXIT_OK, TandemError
from controlplane.experiment import pipeline
from controlplane.experiment.kernel_anchor import run_kernel
from controlplane.machine.description import machine_description
from controlplane.results.comparison_report import median_of, run_summary
from controlplane.results.comparison_rounds import summarise_rounds, sweep_summary
from controlplane.results.lab_summary import LAB_FIELDS, lab_summary
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
    packets hop by hop (latency_breakdown in its chains' results); with `ceiling`, every round also runs rtc once at
    each batch size of CEILING_BATCHES, and the best of their medians is its second ceiling (`ceilings.best_rtc`)."""
    run_duration = duration if duration is not None else spec.duration
    # A lab's clients set the load themselves (TCP's own control, ping's pace): no rate ceiling to sweep. The kernel
    # doing the same work is its anchor instead, once a round.
    lab = spec.lab is not None
    ceiling = ceiling and not lab
    comparison = {
        "spec_name": spec.name,
        "spec": source,
        "machine": machine_description(),
        "repeat": repeat,
        "duration_s": run_duration,
        "warmup_s": spec.warmup,
        "schedulers": {name: {"runs": [], "results": [], "median": None} for name in schedulers},
    }
    sweep = Sweep(spec, source, duration, quiet) if ceiling else None
    # The kernel twice: on veths like Tandem's (offloads off: the anchor of the ratios), and with its default
    # offloads, the fastest it goes (super-frames), which Tandem's chains cannot carry yet.
    kernel = {"runs": [], "offloads_on": {"runs": []}} if lab else None
    status = EXIT_OK
    # Rounds: every scheduler, then every batch size of the sweep, once each, before the next round. This VM's speed
    # drifts over minutes; a round is short enough that its runs mostly share one speed, so a ratio inside a round
    # (each run against rtc's of the same round) cancels the drift that the medians of rates keep.
    for attempt in range(repeat):
        if status == EXIT_INTERRUPTED:
            break
        for name in schedulers:
            entry = comparison["schedulers"][name]
            config = run_config(spec, name, duration)
            if profile:
                with_profiling(config)
            label = f"[{name} {attempt + 1}/{repeat}] "
            total = config["warmup"] + config["duration"] if config["duration"] else None
            progress = ProgressLine(label, total) if not quiet else None
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
                entry["runs"].append(run_summary(outcome.results) | {"round": attempt + 1})
            else:
                entry["error"] = outcome.error
                status = outcome.exit_status
                if outcome.exit_status == EXIT_INTERRUPTED:
                    break
        if sweep is not None and status != EXIT_INTERRUPTED and not sweep.run_round(attempt + 1, repeat):
            status = EXIT_INTERRUPTED
        if kernel is not None and status != EXIT_INTERRUPTED and "unavailable" not in kernel:
            _kernel_round(spec, duration, kernel, attempt + 1, quiet)
    if sweep is not None:
        comparison["ceilings"] = {"best_rtc": sweep.best()}
    elif lab:
        comparison["ceilings"] = {"best_rtc": {"unavailable": "a lab's clients set the load: no rate to sweep"}}
    if kernel is not None:
        for entry in (kernel, kernel["offloads_on"]):
            runs = entry["runs"]
            entry["median"] = {field: median_of([r[field] for r in runs]) for field in LAB_FIELDS} if runs else None
        comparison["kernel"] = kernel
    summarise(comparison, LAB_FIELDS if lab else ())
    return comparison, status


def _kernel_round(spec: Spec, duration: float | None, kernel: dict, round_: int, quiet: bool) -> None:
    """The kernel's run of the lab for one round (experiment/kernel_anchor.py), its summary added to `kernel`."""
    if not quiet:
        print(f"[kernel {round_}] the lab through a Linux bridge with the chains' rules in nftables", file=sys.stderr)
    for offloads, entry in ((False, kernel), (True, kernel["offloads_on"])):
        found = run_kernel(run_config(spec, None, duration), offloads=offloads)
        if "unavailable" in found:
            kernel["unavailable"] = found["unavailable"]
            return
        summary = lab_summary(found["lab"], found["busy_cores"])
        entry["runs"].append(summary | {"round": round_, "rules": found["rules"]})


class Sweep:
    """rtc, the chain run to completion with no switch at all, once a round at each batch size a chain's rings can
    hold; the best-rtc ceiling is the best of the batches' medians over the rounds. A spec rtc cannot run (external
    NFs, kernel-I/O chains) has no such ceiling, and says why."""

    def __init__(self, spec: Spec, source: str, duration: float | None, quiet: bool):
        self.spec, self.source, self.duration, self.quiet = spec, source, duration, quiet
        capacity = min(chain.ring_capacity or spec.ring_capacity for chain in spec.chains)
        self.batches = [b for b in CEILING_BATCHES if b <= capacity]
        self.skipped = [b for b in CEILING_BATCHES if b > capacity]
        # Per batch, its rate in each round so far (None: that run failed), so round r is index r - 1.
        self.runs_by_batch: dict[int, list[float | None]] = {b: [] for b in self.batches}
        self.unavailable: str | None = None

    def run_round(self, round_: int, repeat: int) -> bool:
        """Runs each batch size once; False if interrupted."""
        for batch in self.batches if self.unavailable is None else []:
            config = dict(run_config(self.spec, "rtc", self.duration), burst=batch)
            label = f"[rtc batch {batch} {round_}/{repeat}] "
            progress = ProgressLine(label, config["warmup"] + config["duration"]) if not self.quiet else None
            try:
                outcome = pipeline.run(config, self.source, progress)
            except TandemError as error:
                self.unavailable = str(error).splitlines()[-1]
                return True
            finally:
                if progress:
                    progress.finish()
            ok = outcome.results and outcome.exit_status == EXIT_OK
            self.runs_by_batch[batch].append(run_summary(outcome.results)["delivered_mpps"] if ok else None)
            if outcome.exit_status == EXIT_INTERRUPTED:
                return False
        return True

    def best(self) -> dict:
        """{"mpps", "batch", "by_batch": {batch: median}, "runs_by_batch": {batch: [rate a round]}, "spread",
        "noisy", "skipped", "unavailable"?}: batches that never ran are left out."""
        ran = {batch: runs for batch, runs in self.runs_by_batch.items() if runs}
        found = sweep_summary(ran) | {"runs_by_batch": ran, "skipped": self.skipped}
        return found | ({"unavailable": self.unavailable} if self.unavailable else {})


def summarise(comparison: dict, extra_fields: tuple[str, ...] = ()) -> None:
    """Fills each scheduler's median of its runs' summaries (SUMMARY_FIELDS and `extra_fields`), how far its runs
    spread, and its runs' ratios to rtc's runs of the same rounds (comparison_rounds)."""
    for entry in comparison["schedulers"].values():
        runs = entry["runs"]
        if runs:
            fields = SUMMARY_FIELDS + extra_fields
            entry["median"] = {field: median_of([r.get(field) for r in runs]) for field in fields}
    summarise_rounds(comparison)


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
