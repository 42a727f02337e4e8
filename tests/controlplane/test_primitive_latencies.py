"""The primitive-latency cache and its report (controlplane/machine/primitive_latencies.py): a cache of another machine
is not used, an unsupported measurement is shown as such, and memory latency is looked up by working set and stride."""

from __future__ import annotations

import json

from controlplane.machine import primitive_latencies
from controlplane.machine.description import machine_description


def document(machine: str) -> dict:
    return {
        "format": primitive_latencies.CACHE_FORMAT,
        "machine": machine,
        "date": "2026-11-24T00:00:00+00:00",
        "quick": True,
        "results": {
            "core": 1,
            "other_core": 0,
            "repetitions": 3,
            "context_switch": {
                "cfs": {"median_ns": 2500.0, "min_ns": 2400.0, "max_ns": 2700.0, "samples": 3},
                "fifo": {"unsupported": "fifo: Operation not permitted"},
            },
            "syscall": {"getppid": {"median_ns": 90.0, "min_ns": 88.0, "max_ns": 95.0, "samples": 3}},
            "cache_line_transfer": {"unsupported": "needs two cores; this machine gives one"},
            "idle_wake": {"1 ms": {"median_ns": 41000.0, "min_ns": 40000.0, "max_ns": 45000.0, "samples": 3}},
            "memory": [
                {"bytes": 4096, "stride": 64, "median_ns": 1.2, "min_ns": 1.1, "max_ns": 1.3, "samples": 3},
                {"bytes": 1 << 20, "stride": 64, "median_ns": 8.0, "min_ns": 7.0, "max_ns": 9.0, "samples": 3},
                {"bytes": 1 << 20, "stride": 4096, "unsupported": "no sample"},
            ],
        },
    }


def test_only_this_machines_cache_is_used(tmp_path, monkeypatch):
    monkeypatch.setattr(primitive_latencies, "CACHE_PATH", tmp_path / "p.json")
    assert primitive_latencies.cached() is None
    (tmp_path / "p.json").write_text(json.dumps(document("another machine")))
    assert primitive_latencies.cached() is None
    (tmp_path / "p.json").write_text(json.dumps(document(machine_description())))
    assert primitive_latencies.cached()["results"]["core"] == 1


def test_the_report_shows_unsupported_measurements_with_their_reason():
    text = primitive_latencies.report(document("m"))
    assert "context switch, cfs" in text and "2500.0" in text and "2400.0...2700.0" in text
    assert "fifo: Operation not permitted" in text and "needs two cores" in text
    assert "1 MiB" in text and "4 KiB" in text
    assert "futex wake-up, core 1 idle 1 ms" in text and "41000.0" in text


def test_memory_latency_is_that_of_the_largest_working_set_not_above_the_one_asked():
    doc = document("m")
    assert primitive_latencies.memory_latency_ns(doc, 2 << 20) == 8.0
    assert primitive_latencies.memory_latency_ns(doc, 8192) == 1.2
    assert primitive_latencies.memory_latency_ns(doc, 1 << 20, 4096) is None  # unsupported there: unknown, not 0
