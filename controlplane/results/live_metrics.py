"""Live metrics of a run in Prometheus' format (run --metrics): the manager's counter snapshots, served over HTTP
by the official client library while runs last."""

from __future__ import annotations

import errno
import threading

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from controlplane.errors import SpecError

DEFAULT_PORT = 9464  # the port OpenTelemetry's Prometheus exporter registered; ./tandem run --metrics :9464


def parse_listen_address(text: str, source: str = "--metrics") -> tuple[str, int]:
    """`:PORT` (every interface) or `HOST:PORT`; bad input is a SpecError naming the option."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise SpecError(
            source, [("", f"expected [HOST]:PORT with a port from 1 to 65535, e.g. :{DEFAULT_PORT}, got {text!r}")]
        )
    return host.strip("[]") or "0.0.0.0", int(port)


class RunCollector:
    """The latest snapshot of the run in progress as metric families; the previous one gives the gauges that are
    rates over the last interval (cycles per packet, CPU share). A run's series stay until the next run starts,
    so a scrape after the end still sees the final values."""

    def __init__(self):
        self._lock = threading.Lock()
        self._labels: dict[str, str] = {}
        self._snapshot: dict | None = None
        self._previous: dict | None = None
        self._elapsed = 0.0
        self._phase = ""

    def start_run(self, run: str, scheduler: str, spec: str) -> None:
        with self._lock:
            self._labels = {"run": run, "scheduler": scheduler, "spec": spec}
            self._snapshot = self._previous = None
            self._elapsed, self._phase = 0.0, ""

    def follow(self, config: dict, run: str, spec: str):
        """Makes the run `config` describes report its counters live, and serves it from now on; returns the event
        observer to hand the run."""
        config["live_metrics"] = True
        self.start_run(run, config["scheduler"]["name"], spec)
        return self.observe

    def observe(self, event: dict) -> None:
        """Takes a manager event; progress events carry the snapshot (the run's config asked for live_metrics)."""
        if event.get("event") != "progress" or "metrics" not in event:
            return
        with self._lock:
            self._previous = (self._snapshot, self._elapsed) if self._snapshot is not None else None
            self._snapshot, self._elapsed, self._phase = event["metrics"], event["t"], event["phase"]

    def collect(self):
        with self._lock:
            snapshot, previous, elapsed, phase, run = (
                self._snapshot,
                self._previous,
                self._elapsed,
                self._phase,
                dict(self._labels),
            )
        if not run:
            return []
        families = [self._run_info(run, elapsed, phase)]
        if snapshot is not None:
            counters = [
                _clock_family(run, snapshot),
                *_chain_families(run, snapshot),
                *_nf_families(run, snapshot, previous),
                *_worker_families(run, snapshot, previous, elapsed),
                *_scheduler_families(run, snapshot),
            ]
            # Stamped with when the manager read them, not when they were scraped: a report that arrived late
            # would otherwise make the rate over a window short by up to one report.
            for family in counters:
                family.samples = [sample._replace(timestamp=snapshot["unix_time"]) for sample in family.samples]
            families += counters
        return families

    @staticmethod
    def _run_info(run: dict, elapsed: float, phase: str):
        info = GaugeMetricFamily(
            "tandem_run_elapsed_seconds",
            "Seconds since the run's traffic started (warm-up included)",
            labels=[*run, "phase"],
        )
        info.add_metric([*run.values(), phase], elapsed)
        return info


def _clock_family(run: dict, snapshot: dict):
    """The TSC's rate: busy cycles over it are seconds (the dashboard's NF busy share)."""
    clock = GaugeMetricFamily(
        "tandem_tsc_hertz", "Rate of the time-stamp counter the cycle counts are in", labels=list(run)
    )
    clock.add_metric(list(run.values()), snapshot["tsc_hz"])
    return clock


def _counter(name: str, help_text: str, labels: list[str]) -> CounterMetricFamily:
    return CounterMetricFamily(name, help_text, labels=labels)


def _chain_families(run: dict, snapshot: dict) -> list:
    labels = [*run, "chain"]
    generated = _counter("tandem_chain_offered_packets", "Packets the generator offered to the chain", labels)
    delivered = _counter("tandem_chain_delivered_packets", "Packets the sink received from the chain", labels)
    delivered_bytes = _counter("tandem_chain_delivered_bytes", "Bytes delivered, with the frame check sequence", labels)
    hop_errors = _counter(
        "tandem_chain_hop_errors", "Delivered packets whose hop record is no path of the chain", labels
    )
    latency = HistogramMetricFamily(
        "tandem_chain_latency_seconds", "Latency of sampled packets, generator to sink", labels=labels
    )
    dropped = _counter(
        "tandem_dropped_packets",
        "Packets dropped, by place: a full ring, an NF's decision, a label no edge "
        "takes, or the entry (NFVnice backpressure)",
        [*run, "chain", "place", "at"],
    )
    fell_behind = _counter(
        "tandem_generator_fell_behind_packets",
        "Packets a chain's rate had due that the built-in generator gave up, too far behind to make them up",
        labels,
    )
    ring_in = _counter("tandem_ring_enqueued_packets", "Packets a ring accepted", [*run, "chain", "ring"])
    ring_occupancy = GaugeMetricFamily(
        "tandem_ring_occupancy_packets", "Packets in a ring now", labels=[*run, "chain", "ring"]
    )
    ring_capacity = GaugeMetricFamily(
        "tandem_ring_capacity_packets", "A ring's capacity", labels=[*run, "chain", "ring"]
    )
    values = list(run.values())
    for chain in snapshot["chains"]:
        key = [*values, chain["name"]]
        generated.add_metric(key, chain["generated"])
        delivered.add_metric(key, chain["delivered"])
        delivered_bytes.add_metric(key, chain["delivered_bytes"])
        hop_errors.add_metric(key, chain["hop_errors"])
        dropped.add_metric([*key, "entry", "entry"], chain["entry_backpressure"])
        fell_behind.add_metric(key, chain.get("generator_fell_behind", 0))
        histogram = chain["latency"]
        buckets = [
            (_bound_seconds(bound_us), count)
            for bound_us, count in zip(histogram["bounds_us"], histogram["counts"], strict=False)
        ]
        latency.add_metric(key, buckets + [("+Inf", histogram["count"])], sum_value=histogram["sum_us"] / 1e6)
    for ring in snapshot["rings"]:
        key = [*values, ring["chain"], ring["name"]]
        dropped.add_metric([*values, ring["chain"], "ring", ring["name"]], ring["dropped_full"])
        ring_in.add_metric(key, ring["enqueued"])
        ring_occupancy.add_metric(key, ring["occupancy"])
        ring_capacity.add_metric(key, ring["capacity"])
    for nf in snapshot["nfs"]:
        dropped.add_metric([*values, nf["chain"], "nf", nf["name"]], nf["packets_dropped"])
        dropped.add_metric([*values, nf["chain"], "label_miss", nf["name"]], nf["label_miss"])
    return [
        generated,
        delivered,
        delivered_bytes,
        hop_errors,
        latency,
        dropped,
        fell_behind,
        ring_in,
        ring_occupancy,
        ring_capacity,
    ]


def _bound_seconds(bound_us: float) -> str:
    return repr(bound_us / 1e6)


def _nf_families(run: dict, snapshot: dict, previous: tuple[dict, float] | None) -> list:
    labels = [*run, "chain", "nf"]
    received = _counter("tandem_nf_received_packets", "Packets an NF took from its input", labels)
    sent = _counter("tandem_nf_sent_packets", "Packets an NF passed on", labels)
    busy = _counter("tandem_nf_busy_cycles", "TSC cycles inside the NF's batch function", labels)
    batches = _counter("tandem_nf_batches", "Batches an NF processed", labels)
    cost = GaugeMetricFamily(
        "tandem_nf_cycles_per_packet",
        "Busy cycles per packet over the last progress interval (absent while the NF received nothing)",
        labels=labels,
    )
    before = {nf["name"]: nf for nf in previous[0]["nfs"]} if previous else {}
    for nf in snapshot["nfs"]:
        key = [*run.values(), nf["chain"], nf["name"]]
        received.add_metric(key, nf["packets_in"])
        sent.add_metric(key, nf["packets_out"])
        busy.add_metric(key, nf["busy_cycles"])
        batches.add_metric(key, nf["batches"])
        last = before.get(nf["name"])
        if last and nf["packets_in"] > last["packets_in"]:
            cost.add_metric(key, (nf["busy_cycles"] - last["busy_cycles"]) / (nf["packets_in"] - last["packets_in"]))
    return [received, sent, busy, batches, cost]


def _worker_families(run: dict, snapshot: dict, previous: tuple[dict, float] | None, elapsed: float) -> list:
    labels = [*run, "worker", "nfs", "core"]
    switches = _counter(
        "tandem_worker_context_switches", "Context switches of the worker's process (/proc), by kind", [*labels, "kind"]
    )
    cpu = _counter("tandem_worker_cpu_seconds", "Time the worker ran on a CPU (/proc/PID/schedstat)", labels)
    wait = _counter("tandem_worker_runnable_wait_seconds", "Time the worker was runnable but waited for a CPU", labels)
    migrations = _counter("tandem_worker_migrations", "Moves of the worker between CPUs", labels)
    yields = _counter("tandem_worker_yields", "sched_yield() calls the worker made (cooperative schedulers)", labels)
    sleeps = _counter("tandem_worker_sleeps", "Times the worker blocked (idle input or throttled)", labels)
    share = GaugeMetricFamily(
        "tandem_worker_cpu_share", "Share of one CPU the worker had over the last progress interval", labels=labels
    )
    before = {w["name"]: w for w in previous[0]["workers"]} if previous else {}
    interval = elapsed - previous[1] if previous else 0.0
    for worker in snapshot["workers"]:
        key = [*run.values(), worker["name"], worker["nfs"], str(worker["core"])]
        # A counter /proc did not give is absent from the snapshot, and so from the metrics: never a zero.
        for kind in ("voluntary", "involuntary"):
            if f"{kind}_switches" in worker:
                switches.add_metric([*key, kind], worker[f"{kind}_switches"])
        if "cpu_ns" in worker:
            cpu.add_metric(key, worker["cpu_ns"] / 1e9)
            last = before.get(worker["name"])
            if last and "cpu_ns" in last and interval > 0:
                share.add_metric(key, (worker["cpu_ns"] - last["cpu_ns"]) / 1e9 / interval)
        if "wait_ns" in worker:
            wait.add_metric(key, worker["wait_ns"] / 1e9)
        if "migrations" in worker:
            migrations.add_metric(key, worker["migrations"])
        yields.add_metric(key, worker["yields"])
        sleeps.add_metric(key, worker["sleeps"])
    return [switches, cpu, wait, migrations, yields, sleeps, share]


def _scheduler_families(run: dict, snapshot: dict) -> list:
    """The scheduler's own decisions (cpu.shares, batch sizes, switches, scale events): a name ending in _total is a
    counter, any other a gauge (schedulers/scheduler.h, live_metrics)."""
    decisions = snapshot.get("scheduler") or {}
    families: dict[str, object] = {}

    def family(name: str, labels: list[str]):
        if name not in families:
            help_text = f"Scheduler decision: {name.removeprefix('tandem_scheduler_')}"
            families[name] = (
                _counter(name.removesuffix("_total"), help_text, labels)
                if name.endswith("_total")
                else GaugeMetricFamily(name, help_text, labels=labels)
            )
        return families[name]

    for nf, metrics in sorted((decisions.get("nfs") or {}).items()):
        for metric, value in sorted(metrics.items()):
            family(f"tandem_scheduler_nf_{metric}", [*run, "nf"]).add_metric([*run.values(), nf], value)
    for metric, value in sorted((decisions.get("totals") or {}).items()):
        family(f"tandem_scheduler_{metric}", list(run)).add_metric(list(run.values()), value)
    return list(families.values())


class MetricsServer:
    """Serves a RunCollector on HOST:PORT for as long as the `with` block lasts. The port is bound on entry, before
    any run starts: a port in use is bad input (exit 2), not a failed run."""

    def __init__(self, listen: str, source: str = "--metrics"):
        self.host, self.port = parse_listen_address(listen, source)
        self.source = source
        self.collector = RunCollector()
        self._server = None

    def __enter__(self) -> MetricsServer:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self.collector)
        try:
            self._server, _ = start_http_server(self.port, addr=self.host, registry=registry)
        except OSError as error:
            reason = (
                "the port is in use (another exporter, or a Tandem run still serving?)"
                if error.errno == errno.EADDRINUSE
                else error.strerror or str(error)
            )
            raise SpecError(self.source, [("", f"cannot serve metrics on {self.host}:{self.port}: {reason}")]) from None
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
