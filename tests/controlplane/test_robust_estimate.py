"""The cost statistics on synthetic noisy samples: robust lines and medians, their spread, clamped fixed costs."""

from __future__ import annotations

import random

import pytest

from controlplane.planning.batch_model import PROFILE_BATCHES, fit_batch_time
from controlplane.planning.profile import cost_from_samples
from controlplane.results.robust_estimate import spread, theil_sen_line


def noisy(value: float, rng: random.Random, noise: float = 0.03) -> float:
    return value * (1 + rng.uniform(-noise, noise))


def test_theil_sen_ignores_outliers_that_drag_least_squares():
    rng = random.Random(1)
    batches = [b for b in PROFILE_BATCHES for _ in range(9)]
    times = [noisy(40 * b + 500, rng) for b in batches]
    for i in (3, 20, 41):  # three rounds hit by a busy neighbour: 2-3x slower
        times[i] *= rng.uniform(2, 3)
    line = theil_sen_line(batches, times)
    assert line["k"] == pytest.approx(40, rel=0.05)
    assert not line["c_clamped"]


def test_a_fixed_cost_below_zero_is_clamped_and_flagged():
    line = theil_sen_line([16, 64, 256, 1024], [16 * 50 - 900, 64 * 50 - 900, 256 * 50 - 900, 1024 * 50 - 900])
    assert line["k"] == pytest.approx(50)
    assert line["c"] == 0 and line["c_clamped"] and line["c_raw"] == pytest.approx(-900)


def test_a_line_needs_two_batch_sizes():
    with pytest.raises(ValueError):
        theil_sen_line([64, 64], [1, 2])


def test_spread_is_the_half_width_of_the_middle_80_percent():
    assert spread([100] * 10) == 0
    values = [90, 95, 98, 100, 100, 100, 102, 105, 110, 300]  # one wild value barely moves it
    assert 0.05 < spread(values) < 0.2
    assert spread([100]) == 0  # one value: no spread to speak of


def rows_of(cells: dict, rounds: int, batch: int = 512) -> dict:
    """An estimator result with `rounds` samples per frame size, from {size: [value per round]}."""
    samples = [[batch, size, r, values[r]] for size, values in cells.items() for r in range(rounds)]
    return {
        "batches": [batch],
        "size_dependent": len(cells) > 2,
        "samples_columns": ["batch", "frame_size", "round", "cycles_per_packet"],
        "samples": samples,
    }


def test_a_fixed_cost_nf_costs_its_64_byte_median_with_the_rounds_spread():
    rounds = [100, 104, 96, 250, 101, 99, 103]  # one slow round
    cost = cost_from_samples(rows_of({64: rounds, 1500: [r + 2 for r in rounds]}, len(rounds)))
    assert cost["cycles_per_packet"] == 101
    assert cost["per_size_cycles"] == {"64": 101, "1500": 103}
    assert cost["rounds"] == 7 and 0.02 < cost["spread"] < 0.5


def test_a_size_dependent_nf_costs_the_mean_over_its_sizes():
    cells = {64: [100] * 5, 128: [200] * 5, 1500: [600] * 5}
    cost = cost_from_samples(rows_of(cells, 5))
    assert cost["size_dependent"] and cost["cycles_per_packet"] == pytest.approx(300) and cost["spread"] == 0


@pytest.mark.parametrize("seed", range(20))
def test_batch_model_from_interleaved_rounds_with_a_noisy_round(seed):
    # Rounds within ±0.5 % of each other, one of nine 1.6x slow: the fixed cost c = 2000 is 14 % of a batch of 16 and
    # 0.2 % of one of 1024, so the noise must be this small for any line to find it; at ±3 % it is lost in the large
    # batches' scatter (a fit lands anywhere within ±30 %). Twenty draws: not one lucky seed. Measured: within 4 %.
    rng = random.Random(seed)
    rows = []
    for r in range(9):
        slow = 1.6 if r == 4 else 1.0  # a whole round measured while the machine was slow
        for b in PROFILE_BATCHES:
            rows.append({"batch": b, "round": r, "cycles_per_packet": noisy(slow * (800 * b + 2000), rng, 0.005) / b})
    model = fit_batch_time(rows)
    assert model["k_cycles"] == pytest.approx(800, rel=0.01)
    assert model["c_cycles"] == pytest.approx(2000, rel=0.10) and not model["c_clamped"], model
    assert model["rounds"] == 9
    assert model["spread"] < 0.15  # one slow round out of nine stays outside the middle 80 %
    assert [p[0] for p in model["points"]] == list(PROFILE_BATCHES)
