"""The results of a run and of a comparison as typed models: what the data plane's results.json holds, what the
CLI writes with --json, and what the Python API (tandem.run, tandem.compare) returns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Results(BaseModel):
    # The data plane adds fields before the models learn of them (an NF's report, a probe's findings): they are
    # kept, as given, and written back out; what is typed here is checked.
    model_config = ConfigDict(extra="allow")

    def as_json(self) -> dict:
        """The document as the data plane wrote it: only the fields it had (an OS counter this kernel lacks stays
        absent rather than becoming null), extra ones included."""
        return self.model_dump(mode="json", exclude_unset=True)


class LatencySummary(_Results):
    """Latency of the sampled packets in the measurement window, in microseconds; only `samples` when none was taken."""

    samples: int  # stored: the first 2^18 of the window
    seen: int | None = None  # sampled, stored or not
    mean: float | None = None
    p5: float | None = None
    p25: float | None = None  # with p75: the interquartile range (SCC's jitter)
    p50: float | None = None
    p75: float | None = None
    p95: float | None = None
    p99: float | None = None
    max: float | None = None


class ChainDrops(_Results):
    total: int
    rings: dict[str, int]
    nfs: dict[str, int]
    label_misses: dict[str, int]
    entry_backpressure: int


class InFlight(_Results):
    total: int
    rings: int
    nfs: int  # may be negative for a moment: a killed worker's counters lag its rings (accounting says so)


class ChainWindow(_Results):
    """The chain over the measurement window (warm-up and drain excluded)."""

    seconds: float
    generated: int
    delivered: int
    offered_mpps: float
    delivered_mpps: float
    delivered_gbps: float
    wasted_pps: float
    entry_backpressure_pps: float
    # Packets the rate had due that the generator gave up, more than 4096 behind it (in no drop count: never generated).
    generator_fell_behind: int = 0


class NfLatencyPart(_Results):
    """One NF's share of a chain's latency, µs per traced packet: the wait in its input (behind its other work, while
    it did not run, or unsplit when the wait outlasted its remembered batches) and the time in its batch."""

    nf: str
    visits: int
    queue_us: float
    queue_behind_other_work_us: float
    queue_not_running_us: float
    queue_split_unknown: int
    in_nf_us: float


class LatencyBreakdown(_Results):
    """run --profile: where traced packets' latency went; the parts sum to end_to_end_us."""

    traced_packets: int
    too_long: int  # paths longer than a trace keeps (16 hops)
    lost: int  # traces a later packet's took over before they arrived
    untraced_hops: int
    end_to_end_us: float
    exit_queue_us: float
    nfs: list[NfLatencyPart]


class ChainResult(_Results):
    """One chain, counted from the start: generated = delivered + dropped + merged + in flight - forked, exactly."""

    name: str
    nfs: list[str]
    generated: int
    delivered: int
    delivered_bytes: int
    hop_errors: int
    dropped: ChainDrops
    wasted_work: int
    generator_fell_behind: int = 0  # over the whole run, as the window's
    in_flight: InFlight
    accounting_exact: bool
    window: ChainWindow
    latency_us: LatencySummary
    latency_breakdown: LatencyBreakdown | None = None


class OsRates(_Results):
    """OS counters of a process over the window; a counter this kernel does not give is named in `unavailable`."""

    cpu_share: float | None = None
    runnable_wait_share: float | None = None
    user_share: float | None = None  # CPU seconds in user space per second (/proc/PID/stat utime)
    system_share: float | None = None  # ... in the kernel (stime): a kernel-I/O NF's system calls
    voluntary_switches_per_s: float | None = None
    involuntary_switches_per_s: float | None = None
    migrations_per_s: float | None = None
    unavailable: list[str] = Field(default_factory=list)


class NfWindow(_Results):
    in_mpps: float
    out_mpps: float
    busy_share: float | None = None  # none for an external NF (its loop is not ours to time)
    cycles_per_packet: float | None = None


class NfResult(_Results):
    name: str
    type: str
    chain: str
    core: int
    worker: str | None  # None: its chain was removed before the service re-laid its NFs out in other processes
    io: str = "dpdk"  # kernel: a kernel-I/O NF (packet sockets, poll() while idle)
    args: dict[str, Any]
    packets_in: int
    packets_out: int
    packets_dropped: int
    batches: int
    busy_cycles: int
    window: NfWindow
    report: dict[str, Any] | None = None  # what its last instance counted (an NF's own figures)
    # What its instances before it counted, oldest first: {ended: new arguments | re-layout | crash, at_s, report}
    # (a crashed process's report is null: its counts died with it).
    earlier_reports: list[dict[str, Any]] = []
    os: OsRates | None = None


class RingResult(_Results):
    name: str
    chain: str
    capacity: int
    enqueued: int
    dequeued: int
    dropped_full: int
    occupancy_at_stop: int
    # A kernel link's end: in its receiving socket at stop, dropped by it (queue full), lost before it, foreign frames
    kernel_link: dict | None = None


class WorkerResult(_Results):
    name: str
    pid: int
    core: int
    nfs: str
    exit: str
    yields: int
    sleeps: int
    os: OsRates


class SchedulerResult(_Results):
    name: str
    options: dict[str, Any]
    report: dict[str, Any]


class Accounting(_Results):
    exact: bool
    mbufs_in_use: int
    in_flight: int
    pool_matches_in_flight: bool | None = None  # None: unchecked (pool_unchecked_because says why)
    pool_unchecked_because: str | None = None


class RunResults(_Results):
    """One run's results, as the data plane wrote them (plus cycle_costs and placement where the control plane
    measured or solved them)."""

    name: str
    scheduler: SchedulerResult
    warmup_s: float
    duration_s: float
    tsc_hz: float
    chains: list[ChainResult]
    nfs: list[NfResult]
    rings: list[RingResult]
    workers: list[WorkerResult]
    accounting: Accounting
    warnings: list[str]
    error: str | None = None
    failed_nf: str | None = None
    interrupted: bool
    # Kernel-I/O chains: each interface's packet and drop counters after the run, by chain and end (the control plane's)
    kernel_interfaces: dict | None = None

    def chain(self, name: str) -> ChainResult:
        """The chain called `name` (KeyError naming the chains there are otherwise)."""
        for chain in self.chains:
            if chain.name == name:
                return chain
        raise KeyError(f"no chain {name!r} (chains: {', '.join(c.name for c in self.chains)})")

    @property
    def delivered_mpps(self) -> float:
        """Every chain's delivered rate over the window, summed."""
        return sum(chain.window.delivered_mpps for chain in self.chains)


class RunOutcome(_Results):
    """How a run ended: its results (also partial ones from a failed or interrupted run), the exit status the CLI
    would give (0 ok, 1 failed, 130 interrupted), the error, and notes (state left by an earlier run, cleared)."""

    results: RunResults | None
    exit_status: int
    error: str | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and self.results is not None


class RunSummary(_Results):
    """The figures a comparison's table shows for one run (report.run_summary)."""

    delivered_mpps: float
    offered_mpps: float
    p50_us: float | None = None
    p99_us: float | None = None
    dropped: int
    context_switches_per_s: float | None = None
    accounting_exact: bool
    hop_errors: int
    entry_nf_cycles_per_packet: float | None = None
    compute_bound_mpps: float | None = None  # report.compute_bound_mpps
    # Which round of the comparison it ran in (1-based; every scheduler and batch size of the sweep runs once a round),
    # and its delivered rate over rtc's run, and over the best rtc batch's run, of that round
    round: int | None = None
    vs_rtc: float | None = None
    vs_best_rtc: float | None = None
    # Whether it ran in the VM's slow mode (results/machine_modes.py); None where its first NFs' cost is unknown
    slow_mode: bool | None = None
    # A lab's runs: what its clients measured (results/lab_summary.py)
    lab_goodput_gbps: float | None = None
    lab_retransmits: float | None = None
    lab_rtt_p50_us: float | None = None
    lab_rtt_p99_us: float | None = None
    lab_ping_loss_percent: float | None = None
    lab_busy_cores: float | None = None
    lab_commands_met: float | None = None


class SchedulerRuns(_Results):
    runs: list[RunSummary]
    results: list[RunResults]
    # The medians of the runs' summary fields, and of their vs_rtc and vs_best_rtc (per-round ratios: the figures
    # to rank by when the machine changed speed between rounds), and vs_rtc_same_mode (vs_rtc over the rounds where
    # the run and rtc's ran in one mode of the VM)
    median: dict[str, float | None] | None = None
    error: str | None = None  # why a run failed; the runs before it are kept
    spread: float | None = None  # fastest run's delivered rate over the slowest's; None with fewer than two
    noisy: bool = False  # spread above comparison_rounds.NOISY_SPREAD (1.5): the medians of rates are no ranking


class Comparison(_Results):
    """One spec under several schedulers, each run `repeat` times in rounds; medians and per-round ratios per
    scheduler."""

    spec_name: str
    spec: str
    machine: str
    repeat: int
    duration_s: float | None  # None: a lab's runs, each until its clients are done
    warmup_s: float
    schedulers: dict[str, SchedulerRuns]
    # A lab spec's: the kernel doing the same work each round (experiment/kernel_anchor.py): {"runs": [lab summary
    # a round], "median": {...}} or {"unavailable": why}
    kernel: dict | None = None
    exit_status: int = 0
    # {"best_rtc": {"mpps", "batch", "by_batch": {batch: median mpps}, "runs_by_batch": {batch: [mpps a round]},
    # "spread", "noisy" (the best batch's), "skipped", "unavailable"?}}: the second ceiling, swept in every round
    ceilings: dict | None = None

    def median(self, scheduler: str, field: str) -> float | None:
        """A scheduler's median of one summary field (delivered_mpps, p99_us, ...); None if none of its runs ran."""
        entry = self.schedulers[scheduler]
        return entry.median.get(field) if entry.median else None

    def noisy(self) -> list[str]:
        """The schedulers whose runs differ by more than 1.5x: where the machine changed speed between runs, so rank
        by median(name, "vs_rtc") (ratios inside one round) rather than by the medians of rates."""
        return [name for name, entry in self.schedulers.items() if entry.noisy]
