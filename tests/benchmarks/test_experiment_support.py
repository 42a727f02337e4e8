"""The bench's paired ratios: runs paired back to back, pairs that straddle the VM's two modes left out."""
import pytest

from bench.experiment_support import paired_share, round_trips


def comparison(unis: list[tuple[float, float | None]], coop: list[tuple[float, float | None]]) -> dict:
    def runs(pairs):
        return {"runs": [{"delivered_mpps": mpps, "core_round_trip_ns": ns} for mpps, ns in pairs]}
    return {"schedulers": {"unis": runs(unis), "coop": runs(coop)}}


def test_pairs_in_the_same_mode_make_the_ratio():
    # The second pair straddles a mode change (unis near, coop far): alone it would say 2.5x.
    c = comparison([(9.0, 80.0), (20.0, 90.0), (4.0, 390.0)], [(10.0, 85.0), (8.0, 380.0), (5.0, 370.0)])
    assert paired_share(c, "unis", "coop") == pytest.approx(0.85)  # median of 0.9 and 0.8


def test_without_same_mode_pairs_or_probes_every_pair_counts():
    assert paired_share(comparison([(20.0, 90.0)], [(8.0, 380.0)]), "unis", "coop") == 2.5
    assert paired_share(comparison([(9.0, None), (8.0, None)], [(10.0, None), (10.0, None)]), "unis", "coop") == pytest.approx(0.85)


def test_round_trips_are_found_in_any_document_shape():
    c = comparison([(9.0, 80.0)], [(10.0, 385.0)])
    assert sorted(round_trips({"light": {3: c}, "cases": [c]})) == [80.0, 80.0, 385.0, 385.0]


def test_a_mode_can_be_asked_for():
    c = comparison([(9.0, 80.0), (20.0, 90.0), (4.0, 390.0)], [(10.0, 85.0), (8.0, 380.0), (5.0, 370.0)])
    assert paired_share(c, "unis", "coop", far=False) == pytest.approx(0.9)
    assert paired_share(c, "unis", "coop", far=True) == pytest.approx(0.8)
    assert paired_share(comparison([(9.0, 80.0)], [(10.0, 85.0)]), "unis", "coop", far=True) is None
