"""The latency goal (bench/auto_experiments.py): its load (below_saturation), a workload's own rate where every
compared scheduler carried it in a first round, else 70 % of the least one delivered, each chain's rate scaled alike;
and its verdict, missed only where the median's bootstrap interval lies past the goal."""

from __future__ import annotations

import statistics

import pytest

from bench import auto_experiments
from tandem import Spec


def spec(*rates: str | None) -> Spec:
    chains = [
        {"name": f"c{k}", "nfs": [{"name": f"n{k}", "type": "ttl", "core": 1}]}
        | ({"traffic": {"rate": rate}} if rate else {})
        for k, rate in enumerate(rates)
    ]
    return Spec.model_validate({"name": "w", "traffic": {"rate": "max"}, "chains": chains})


@pytest.fixture
def delivered(monkeypatch):
    """The first round's delivered Mpps by scheduler, as `run` would answer."""
    answers: dict[str, float] = {}

    def first_round(_spec, schedulers, repeat, _duration):
        assert repeat == 1
        return {"schedulers": {name: {"median": {"delivered_mpps": answers[name]}} for name in schedulers}}

    monkeypatch.setattr(auto_experiments, "run", first_round)
    return answers


def rates_of(spec: Spec) -> list[float]:
    return [chain.traffic.rate for chain in spec.chains]


def test_a_workload_at_max_runs_at_a_share_of_what_the_slowest_delivered_each_chain_alike(delivered):
    delivered.update(rtc=10.0, unis=4.0)
    loaded, offered = auto_experiments.below_saturation(spec(None, None), ["rtc", "unis"], 1.0)
    assert offered == pytest.approx(0.7 * 4.0)
    assert rates_of(loaded) == pytest.approx([0.7 * 4e6 / 2] * 2)


def test_a_rate_every_scheduler_carried_stays_and_one_they_did_not_is_scaled_in_proportion(delivered):
    delivered.update(rtc=3.0, unis=2.99)
    workload = spec("1 Mpps", "2 Mpps")
    assert auto_experiments.below_saturation(workload, ["rtc", "unis"], 1.0) == (workload, None)
    delivered.update(unis=1.5)
    loaded, offered = auto_experiments.below_saturation(workload, ["rtc", "unis"], 1.0)
    assert offered == pytest.approx(0.7 * 1.5) and rates_of(loaded) == pytest.approx([0.35e6, 0.7e6])


def test_a_median_past_the_goal_is_missed_only_where_every_resampled_median_is():
    far = [1.4, 1.5, 1.6, 1.5, 1.45, 1.55, 1.5]  # auto's p99 half again the best's in every round
    assert auto_experiments.latency_verdict(1.5, auto_experiments.median_interval(far)) == "missed"
    noisy = [0.2, 2.9, 0.6, 1.9, 21.0, 0.1, 2.6, 1.96, 2.7]  # the same policy against itself on a noisy host
    low, high = auto_experiments.median_interval(noisy)
    assert low <= 1.0 <= high
    assert auto_experiments.latency_verdict(statistics.median(noisy), (low, high)) == "unclear"
    assert auto_experiments.latency_verdict(0.9, None) == "met"
    assert auto_experiments.median_interval([1.2, 1.2, 1.2]) is None  # nothing to resample
