"""Live metrics without a run: the manager's snapshots become Prometheus metrics with the right names, types and
values, a counter /proc does not give is absent (never zero), and the shipped Grafana dashboard asks only for
metrics Tandem serves."""

from __future__ import annotations

import json
import re
import socket
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from conftest import REPO
from controlplane.errors import SpecError
from controlplane.results.live_metrics import MetricsServer, RunCollector, parse_listen_address

BOUNDS_US = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000]


def snapshot(delivered: int, busy: int, packets_in: int, cpu_ns: int | None, scheduler: dict | None = None) -> dict:
    worker = {"name": "w1", "core": 1, "nfs": "fw1", "yields": 7, "sleeps": 0, "voluntary_switches": 3}
    if cpu_ns is not None:
        worker |= {"cpu_ns": cpu_ns, "involuntary_switches": 5}
    return {
        "unix_time": 1_795_000_000.0 + delivered / 1000,
        "tsc_hz": 2e9,
        "chains": [
            {
                "name": "c",
                "generated": delivered + 10,
                "delivered": delivered,
                "delivered_bytes": 64 * delivered,
                "hop_errors": 0,
                "entry_backpressure": 4,
                "generator_fell_behind": 7,
                "latency": {"bounds_us": BOUNDS_US, "counts": [0, 0, 1, 3] + [4] * 12, "count": 5, "sum_us": 2000.0},
            }
        ],
        "rings": [
            {
                "name": "c:entry",
                "chain": "c",
                "enqueued": delivered + 6,
                "dropped_full": 6,
                "occupancy": 2,
                "capacity": 512,
            }
        ],
        "nfs": [
            {
                "name": "fw1",
                "chain": "c",
                "packets_in": packets_in,
                "packets_out": packets_in,
                "packets_dropped": 0,
                "label_miss": 0,
                "busy_cycles": busy,
                "batches": 10,
            }
        ],
        "workers": [worker],
        "scheduler": scheduler or {},
    }


def scrape(collector: RunCollector) -> dict[str, list]:
    """What a scrape of `collector` shows: samples by name."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    samples: dict[str, list] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(sample)
    return samples


def value(samples: dict, name: str, **labels) -> float:
    matching = [s.value for s in samples[name] if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(matching) == 1, (name, labels, samples.get(name))
    return matching[0]


def observed(*snapshots_at: tuple[float, dict]) -> RunCollector:
    collector = RunCollector()
    collector.start_run("nfvnice#1", "nfvnice", "spec")
    for t, metrics in snapshots_at:
        collector.observe({"event": "progress", "t": t, "phase": "measure", "metrics": metrics})
    return collector


def test_nothing_is_served_before_a_run_starts():
    assert scrape(RunCollector()) == {}


def test_counters_histogram_and_interval_gauges():
    samples = scrape(
        observed((1.0, snapshot(1000, 50_000, 1000, 10**8)), (1.5, snapshot(3000, 130_000, 3000, 4 * 10**8)))
    )
    run = {"run": "nfvnice#1", "scheduler": "nfvnice", "spec": "spec"}
    assert value(samples, "tandem_chain_delivered_packets_total", chain="c", **run) == 3000
    assert value(samples, "tandem_chain_offered_packets_total", chain="c") == 3010
    assert value(samples, "tandem_dropped_packets_total", place="ring", at="c:entry") == 6
    assert value(samples, "tandem_dropped_packets_total", place="entry") == 4
    assert value(samples, "tandem_generator_fell_behind_packets_total", chain="c") == 7
    # Cumulative buckets in seconds, +Inf = every sample, the sum in seconds.
    assert value(samples, "tandem_chain_latency_seconds_bucket", le="5e-06") == 1
    assert value(samples, "tandem_chain_latency_seconds_bucket", le="1e-05") == 3
    assert value(samples, "tandem_chain_latency_seconds_bucket", le="+Inf") == 5
    assert value(samples, "tandem_chain_latency_seconds_sum") == pytest.approx(0.002)
    # Over the last interval: 80,000 cycles for 2,000 packets; 0.3 s of CPU in 0.5 s.
    assert value(samples, "tandem_nf_cycles_per_packet", nf="fw1") == pytest.approx(40.0)
    assert value(samples, "tandem_worker_cpu_share", worker="w1") == pytest.approx(0.6)
    assert value(samples, "tandem_worker_cpu_seconds_total", worker="w1") == pytest.approx(0.4)
    assert value(samples, "tandem_tsc_hertz") == 2e9
    # Every sample carries the time the manager read the counters, for rate() to divide by.
    assert {s.timestamp for name, found in samples.items() if name != "tandem_run_elapsed_seconds" for s in found} == {
        1_795_000_003.0
    }


def test_interval_gauges_need_two_snapshots_and_traffic():
    samples = scrape(observed((1.0, snapshot(1000, 50_000, 1000, 10**8))))
    assert "tandem_nf_cycles_per_packet" not in samples and "tandem_worker_cpu_share" not in samples
    idle = scrape(observed((1.0, snapshot(1000, 50_000, 1000, 10**8)), (1.5, snapshot(1000, 50_000, 1000, 10**8))))
    assert "tandem_nf_cycles_per_packet" not in idle  # no packet in the interval: no cost, rather than 0 or inf


def test_a_counter_proc_does_not_give_is_absent_not_zero():
    samples = scrape(observed((1.0, snapshot(1000, 50_000, 1000, cpu_ns=None))))
    kinds = {s.labels["kind"] for s in samples["tandem_worker_context_switches_total"]}
    assert kinds == {"voluntary"}
    assert "tandem_worker_cpu_seconds_total" not in samples


def test_scheduler_decisions_are_counters_or_gauges_by_name():
    decisions = {"nfs": {"fw1": {"cpu_shares": 2048, "switches_in_total": 9}}, "totals": {"weight_updates_total": 12}}
    registry = CollectorRegistry(auto_describe=False)
    registry.register(observed((1.0, snapshot(1000, 1, 1000, 1, decisions))))
    types = {family.name: family.type for family in text_string_to_metric_families(generate_latest(registry).decode())}
    assert types["tandem_scheduler_nf_cpu_shares"] == "gauge"
    assert types["tandem_scheduler_nf_switches_in"] == "counter"
    assert types["tandem_scheduler_weight_updates"] == "counter"


def test_a_new_run_replaces_the_last_ones_series():
    collector = observed((1.0, snapshot(1000, 1, 1000, 1)))
    collector.start_run("bubble#1", "bubble", "spec")
    samples = scrape(collector)
    assert set(samples) == {"tandem_run_elapsed_seconds"}
    assert samples["tandem_run_elapsed_seconds"][0].labels["scheduler"] == "bubble"


@pytest.mark.parametrize(
    "text, expected", [(":9464", ("0.0.0.0", 9464)), ("127.0.0.1:80", ("127.0.0.1", 80)), ("[::1]:9000", ("::1", 9000))]
)
def test_listen_addresses(text, expected):
    assert parse_listen_address(text) == expected


@pytest.mark.parametrize("text", ["9464x", ":0", ":70000", "host:", ""])
def test_bad_listen_addresses_name_the_option(text):
    with pytest.raises(SpecError, match=r"--metrics: expected \[HOST\]:PORT"):
        parse_listen_address(text)


def test_the_server_serves_the_collector_and_frees_its_port():
    with MetricsServer(f"127.0.0.1:{_free_port()}") as server:
        server.collector.start_run("coop#1", "coop", "spec")
        server.collector.observe({"event": "progress", "t": 0.5, "phase": "warmup", "metrics": snapshot(10, 1, 10, 1)})
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5) as response:
            text = response.read().decode()
        assert 'tandem_chain_delivered_packets_total{chain="c",run="coop#1",scheduler="coop",spec="spec"} 10.0' in text
        with pytest.raises(SpecError, match="the port is in use"):
            with MetricsServer(f"127.0.0.1:{server.port}"):
                pass
    with MetricsServer(f"127.0.0.1:{server.port}"):  # given back on exit
        pass


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_grafana_dashboard_asks_only_for_served_metrics():
    """Every metric a panel queries is one the collector serves (generic ones from a snapshot; a scheduler's from
    the live_metrics() of the scheduler module that reports it)."""
    dashboard = json.loads((REPO / "monitoring" / "grafana-dashboard.json").read_text())
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    expressions += [
        variable["query"]["query"] for variable in dashboard["templating"]["list"] if variable["type"] == "query"
    ]
    asked = {name for expr in expressions for name in re.findall(r"\btandem_[a-z_]+", expr)}
    served = set(scrape(observed((1.0, snapshot(1, 1, 1, 1)), (1.5, snapshot(2, 3, 2, 2)))))
    scheduler_sources = "\n".join(p.read_text() for p in (REPO / "schedulers").rglob("*.cc"))
    missing = []
    for name in sorted(asked):
        base = name.removesuffix("_bucket")
        if name.startswith("tandem_scheduler_"):
            metric = re.sub(r"^tandem_scheduler_(nf_)?", "", name)
            if f'"{metric}"' not in scheduler_sources:
                missing.append(name)
        elif name not in served and base + "_bucket" not in served:
            missing.append(name)
    assert not missing, f"the dashboard queries metrics nobody serves: {missing}"
    assert len(dashboard["panels"]) >= 10
