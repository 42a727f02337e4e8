"""The throughput goal's table (bench/auto_experiments.py): a round whose run of auto or of the best single found
the machine slow (its generator's cycles a packet, flat out, at least twice the comparison's median) is marked, and
left out of the median at speed; at a fixed rate nothing is marked."""

from __future__ import annotations

from bench import auto_experiments


def entry(mpps: list[float], cycles: list[float]) -> dict:
    runs = [{"round": k + 1, "delivered_mpps": m} for k, m in enumerate(mpps)]
    return {"runs": runs, "results": [{"generator_build_cycles_per_packet": c} for c in cycles], "median": None}


# rtc's third run and auto's second inside a slow spell: both deliver half their usual rate.
COMPARISON = {
    "schedulers": {
        "rtc": entry([20.0, 20.0, 10.0, 20.0], [16, 17, 68, 16]),
        "coop": entry([14.0, 14.0, 14.0, 14.0], [16, 16, 16, 15]),
        "auto": entry([19.0, 10.0, 19.0, 21.0], [16, 65, 17, 16]),
    }
}


def test_a_round_with_a_run_in_a_slow_spell_is_marked_and_left_out_of_the_median_at_speed():
    assert auto_experiments.slow_machine_runs(COMPARISON) == {"rtc": {3}, "coop": set(), "auto": {2}}
    slow_rounds, at_speed = auto_experiments.ratios_at_speed(
        COMPARISON, True, auto_experiments.ratios_to_best(COMPARISON)
    )
    # Round 3's best is coop (rtc slow), and auto's run in it was not slow: not marked.
    assert slow_rounds == [False, True, False, False]
    assert at_speed == [0.95, 19.0 / 14.0, 1.05]


def test_at_a_fixed_rate_nothing_is_marked():
    slow_rounds, at_speed = auto_experiments.ratios_at_speed(
        COMPARISON, False, auto_experiments.ratios_to_best(COMPARISON)
    )
    assert not any(slow_rounds) and len(at_speed) == 4
    assert auto_experiments.generator_flat_out("three-firewalls")  # rate: max
    assert not auto_experiments.generator_flat_out("http-waf")  # 1 Mpps
    assert not auto_experiments.generator_flat_out("stepped-rate")
