"""auto's switch costs from this machine (controlplane/machine/switch_costs.py): what the spec gives stays, each
unset one comes from the measurement (NFVnice's wake-up as two hand-offs), a switch that cannot be measured here
keeps its default saying why, and the cache is this machine's and these cores' alone."""

from __future__ import annotations

import json

import pytest

from controlplane.machine import switch_costs
from controlplane.machine.description import machine_description
from controlplane.results.auto_report import switch_cost_line


def measurement(median_ns: float) -> dict:
    return {"median_ns": median_ns, "min_ns": median_ns, "max_ns": median_ns, "samples": 7}


MEASURED = {
    "date": "2026-11-30T06:00:00+00:00",
    "yield_handoff": measurement(700.0),
    "priority_switch": measurement(18000.0),
    "user_level_switch": measurement(25.0),
    "idle_wake_1ms": measurement(43000.0),
}


def config(options: dict | None = None) -> dict:
    nfs = [{"name": "a", "type": "cost", "core": 1}, {"name": "b", "type": "cost", "core": 1}]
    return {
        "control_core": 0,
        "scheduler": {"name": "auto", "options": dict(options or {})},
        "chains": [{"name": "c", "nfs": nfs}],
    }


def test_what_the_spec_gives_stays_and_every_other_switch_is_this_machines():
    options, sources = switch_costs.filled_options({"objective": "latency", "yield_ns": 999}, MEASURED, "measured")
    assert options == {
        "objective": "latency",
        "yield_ns": 999,
        "wakeup_ns": 1400.0,  # two of this machine's hand-offs, whatever the spec says one costs
        "priority_switch_ns": 18000.0,
        "thread_switch_ns": 25.0,
        "sleeper_wakeup_ns": 43000.0,
    }
    assert sources["yield_ns"] == {"ns": 999, "source": "spec"}
    assert sources["wakeup_ns"]["source"] == "measured" and "yield_handoff x2" in sources["wakeup_ns"]["from"]
    line = switch_cost_line(sources)
    assert "yield 999 ns (spec)" in line and "priority switch 18,000 ns (measured)" in line, line


def test_a_switch_not_measurable_here_keeps_its_default_and_says_why():
    one_core = dict(MEASURED, priority_switch={"unsupported": "needs two cores; this machine gives one"})
    one_core["idle_wake_1ms"] = measurement(9e7)  # not seen within the probe's time: no cost to charge
    options, sources = switch_costs.filled_options({}, one_core, "cache")
    assert "priority_switch_ns" not in options and "sleeper_wakeup_ns" not in options
    assert sources["priority_switch_ns"] == {
        "source": "default",
        "why": "priority_switch: needs two cores; this machine gives one",
    }
    assert "beyond the option's range" in sources["sleeper_wakeup_ns"]["why"]
    assert "priority switch default (priority_switch: needs two cores" in switch_cost_line(sources)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "switch-costs.json"
    monkeypatch.setattr(switch_costs, "CACHE_PATH", path)
    return path


def test_the_cache_of_this_machine_and_cores_is_used_and_nothing_is_measured(cache, monkeypatch):
    cache.write_text(
        json.dumps({"format": 1, "machine": machine_description(), "by_cores": {"core 1 from core 0": MEASURED}})
    )
    monkeypatch.setattr(switch_costs.primitive_latencies, "run_tool", lambda *a: pytest.fail("measured again"))
    filled, sources = switch_costs.with_switch_costs(config({"margin": 0.2}))
    assert filled["scheduler"]["options"]["priority_switch_ns"] == 18000.0
    assert filled["scheduler"]["options"]["margin"] == 0.2
    assert {source["source"] for source in sources.values()} == {"cache"}


def test_another_machines_or_cores_cache_is_measured_again_and_kept_beside(cache, monkeypatch):
    cache.write_text(json.dumps({"format": 1, "machine": "another host", "by_cores": {"core 1 from core 0": {}}}))
    asked = []

    def run_tool(core, other_core, *flags):
        asked.append((core, other_core, flags))
        return {
            "yield_handoff": measurement(600.0),
            "priority_switch": measurement(15000.0),
            "user_level_switch": measurement(20.0),
            "idle_wake": {"1 ms": measurement(40000.0)},
        }

    monkeypatch.setattr(switch_costs.primitive_latencies, "run_tool", run_tool)
    _, sources = switch_costs.with_switch_costs(config())
    assert asked == [(1, 0, ("--switch-costs",))]
    assert sources["yield_ns"]["ns"] == 600.0 and sources["yield_ns"]["source"] == "measured"
    moved = config()
    moved["chains"][0]["nfs"][0]["core"] = moved["chains"][0]["nfs"][1]["core"] = 3
    switch_costs.with_switch_costs(moved)  # another NF core: its own measurement, the first one kept
    assert asked[-1][0] == 3
    stored = json.loads(cache.read_text())
    assert stored["machine"] == machine_description()
    assert set(stored["by_cores"]) == {"core 1 from core 0", "core 3 from core 0"}


def test_a_spec_that_gives_every_switch_measures_nothing(cache, monkeypatch):
    monkeypatch.setattr(switch_costs.primitive_latencies, "run_tool", lambda *a: pytest.fail("measured"))
    given = {option: 100 for option in switch_costs.MEASURED_OPTIONS}
    filled, sources = switch_costs.with_switch_costs(config(given))
    assert filled["scheduler"]["options"] == given
    assert {source["source"] for source in sources.values()} == {"spec"}
    assert not cache.exists()


def test_a_live_switch_takes_the_cached_switches_and_never_measures(cache, monkeypatch):
    monkeypatch.setattr(switch_costs.primitive_latencies, "run_tool", lambda *a: pytest.fail("measured while running"))
    running = config()
    assert switch_costs.cached_into({"objective": "latency"}, running) == {"objective": "latency"}  # none cached
    cache.write_text(
        json.dumps({"format": 1, "machine": machine_description(), "by_cores": {"core 1 from core 0": MEASURED}})
    )
    options = switch_costs.cached_into({"objective": "latency", "thread_switch_ns": 5}, running)
    assert options["thread_switch_ns"] == 5 and options["priority_switch_ns"] == 18000.0
