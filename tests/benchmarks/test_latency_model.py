"""bench/latency_model.py: the loads it offers come from rtc's full-load run, each policy's prediction is read from
auto's decision of the same round, and its saved table is what its saved runs give."""

from __future__ import annotations

from bench import latency_model
from bench.experiment_support import RESULTS, read_result


def decision(latencies: dict[str, float]) -> dict:
    """A run of auto as its results hold it: the first decision's prediction for each policy."""
    predictions = [{"policy": name, "feasible": True, "latency_us": value} for name, value in latencies.items()]
    return {"scheduler": {"report": {"policy": "rtc", "decisions": [{"predictions": predictions}]}}}


def test_the_prediction_is_the_median_over_autos_runs_and_a_failed_run_is_left_out():
    autos = [decision({"rtc": 2.0, "coop": 9.0}), None, decision({"rtc": 3.0, "coop": 7.0}), decision({"rtc": 4.0})]
    assert latency_model.predicted(autos, "rtc") == 3.0
    assert latency_model.predicted(autos, "coop") == 8.0
    assert latency_model.predicted(autos, "unis") is None


def test_the_loads_are_shares_of_rtcs_full_load_rate(monkeypatch):
    offered = []

    def one_run(rate, scheduler, _duration):
        offered.append((rate, scheduler["name"]))
        delivered = 0.4 if rate == "max" else rate / 1e6
        return {"chains": [{"window": {"delivered_mpps": delivered}, "latency_us": {"p50": 1.0}}]}

    monkeypatch.setattr(latency_model, "one_run", one_run)
    document = latency_model.measure(repeat=1, duration=0.1)
    assert offered[0] == ("max", "rtc") and document["capacity_pps"] == 400_000
    rates = sorted({rate for rate, _ in offered[1:]})
    assert rates == [round(load * 400_000) for load in latency_model.LOADS]
    assert len(offered) == 1 + len(latency_model.LOADS) * (len(latency_model.POLICIES) + len(latency_model.AUTOS))


def test_the_saved_table_is_what_the_saved_runs_give():
    document = read_result("latency-model")
    assert (RESULTS / "latency-model.md").read_text() == f"```\n{latency_model.report(document)}\n```\n"
    rows = latency_model.rows(document)
    assert len(rows) == len(latency_model.LOADS) * len(latency_model.POLICIES)
    assert all(row[3] != "failed" and row[4] != "failed" for row in rows), rows
