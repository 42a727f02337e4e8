"""The bench's paired ratios: runs paired back to back, pairs that straddle the VM's two modes left out."""

import pytest

from bench.experiment_support import paired_share
from controlplane.results.machine_modes import slow_runs


def comparison(unis: list[tuple[float, float | None]], coop: list[tuple[float, float | None]]) -> dict:
    """Runs as (delivered Mpps, first NFs' cycles per packet)."""

    def runs(pairs):
        return {"runs": [{"delivered_mpps": mpps, "entry_nf_cycles_per_packet": cycles} for mpps, cycles in pairs]}

    return {"schedulers": {"unis": runs(unis), "coop": runs(coop)}}


def test_pairs_in_the_same_mode_make_the_ratio():
    # The second pair straddles a mode change (unis fast, coop slow): alone it would say 2.5x.
    c = comparison([(9.0, 90.0), (20.0, 92.0), (4.0, 120.0)], [(10.0, 91.0), (8.0, 110.0), (5.0, 115.0)])
    assert paired_share(c, "unis", "coop") == pytest.approx(0.85)  # median of 0.9 and 0.8


def test_without_same_mode_pairs_or_measurements_every_pair_counts():
    assert paired_share(comparison([(20.0, 90.0)], [(8.0, 110.0)]), "unis", "coop") == 2.5
    assert paired_share(
        comparison([(9.0, None), (8.0, None)], [(10.0, None), (10.0, None)]), "unis", "coop"
    ) == pytest.approx(0.85)


def test_a_mode_can_be_asked_for():
    c = comparison([(9.0, 90.0), (20.0, 92.0), (4.0, 120.0)], [(10.0, 91.0), (8.0, 110.0), (5.0, 115.0)])
    assert paired_share(c, "unis", "coop", slow=False) == pytest.approx(0.9)
    assert paired_share(c, "unis", "coop", slow=True) == pytest.approx(0.8)
    assert paired_share(comparison([(9.0, 90.0)], [(10.0, 91.0)]), "unis", "coop", slow=True) is None
    # Both slow, told so by a cheaper run elsewhere:
    assert paired_share(
        comparison([(9.0, 120.0)], [(10.0, 121.0)]), "unis", "coop", slow=True, fastest=90.0
    ) == pytest.approx(0.9)


def test_runs_whose_first_nfs_pay_well_above_the_cheapest_ran_in_the_slow_mode():
    runs = [{"entry_nf_cycles_per_packet": c} for c in (162.0, 171.0, 190.0, None)]
    assert slow_runs(runs) == [False, False, True, None]
    all_slow = [{"entry_nf_cycles_per_packet": 190.0}] * 2
    assert slow_runs(all_slow) == [False, False]  # nothing to tell them from
    assert slow_runs(all_slow, fastest=162.0) == [True, True]  # the cheapest run seen elsewhere does
