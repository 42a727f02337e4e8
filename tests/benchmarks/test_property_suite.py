"""The property suite's own logic: workloads drawn within their bounds and the same for a seed, each promise judged
held or broken by its bound, and the summary naming the worst case. (A run of the suite itself is in
tests/integration/test_property_suite.py.)"""

from __future__ import annotations

import random

from bench.property_suite import Workload, draw, promises, spec_of, summary


def test_workloads_stay_in_their_bounds_and_a_seed_draws_the_same():
    first = [draw(random.Random(7), i) for i in range(1)] + [draw(random.Random(7), 0)]
    assert first[0] == first[1]
    rng = random.Random(3)
    for index in range(200):
        workload = draw(rng, index)
        assert 1 <= len(workload.costs) <= 4 and all(1 <= len(chain) <= 8 for chain in workload.costs)
        assert all(20 <= cycles <= 2000 for chain in workload.costs for cycles in chain)
        assert abs(sum(workload.shares) - 1) < 1e-3 and all(rate > 0 for rate in workload.rates_pps)
        assert len(spec_of(workload).chains) == len(workload.costs)


def run(mpps: float, chains: list[tuple[float, float]], exact: bool = True) -> tuple[dict, dict]:
    """A run's summary and results: chains as (offered, delivered) Mpps."""
    results = {
        "accounting": {"exact": exact},
        "chains": [
            {"accounting_exact": exact, "window": {"offered_mpps": offered, "delivered_mpps": delivered}}
            for offered, delivered in chains
        ],
    }
    return {"delivered_mpps": mpps}, results


def comparison(**schedulers: list[tuple[dict, dict]]) -> dict:
    return {
        "schedulers": {
            name: {"runs": [summary for summary, _ in runs], "results": [results for _, results in runs]}
            for name, runs in schedulers.items()
        }
    }


def test_each_promise_is_held_or_broken_by_its_bound():
    workload = Workload("w", [[100], [100]], [0.5, 0.5], "overload", [1e6, 1e6])
    checked = promises(
        workload,
        comparison(
            rtc=[run(4.0, [(2, 2), (2, 2)])],
            coop=[run(1.9, [(2, 1), (2, 0.9)])],  # below half of rtc
            unis=[run(1.8, [(2, 0.9), (2, 0.9)])],  # 0.95 of coop
            bubble=[run(3.9, [(2, 2), (2, 1.9)])],  # 0.975 of rtc: inside the margin
            nfvnice=[run(1.0, [(2, 0.95), (2, 0.01)], exact=False)],  # unfair, one chain starved, inexact
        ),
    )
    held = {(item["scheduler"], item["promise"]): item["held"] for item in checked}
    assert held[("coop", "coop >= 0.5 rtc")] is False
    assert held[("unis", "unis >= 0.9 coop")] is True
    assert held[("bubble", "bubble >= rtc (5 % margin)")] is True
    assert held[("nfvnice", "output in proportion to arrival (Jain)")] is False
    assert held[("nfvnice", "no chain starved")] is False and held[("nfvnice", "exact accounting")] is False
    assert held[("rtc", "exact accounting")] is True
    rows, text = summary([{"workload": {"name": "w"}, "promises": checked}])
    assert ["coop", "coop >= 0.5 rtc", "0/1", "0%", "0.47", "w"] in rows and "worst workload" in text
