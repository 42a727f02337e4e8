"""Bubble's placement model on small instances whose optimum is known."""
from __future__ import annotations

import pytest

from controlplane.placement import PlacedNf, PlacementError, solve

HZ = 1e9  # one core = 1e9 cycles a second


def nf(name, chain, rate, k, c=0.0, weight=1.0):
    return PlacedNf(name=name, chain=chain, rate_pps=rate, weight=weight, k_cycles=k, c_cycles=c)


def test_work_that_does_not_fit_one_core_is_spread_within_capacity():
    # Each chain needs 0.6 of a core: together they do not fit one core, so both cores are used, neither over.
    nfs = [nf("a1", "a", 3e6, 100), nf("a2", "a", 3e6, 100), nf("b1", "b", 3e6, 200)]
    solution = solve(nfs, [1, 2], HZ)
    assert solution["accepted"] == ["a", "b"]
    assert set(solution["placement"].values()) == {1, 2}
    assert all(u <= 1 + 1e-6 for u in solution["core_utilisation"].values()), solution["core_utilisation"]
    assert solution["objective"] == pytest.approx(3 * 3e6)


def test_chain_integrity_rejects_a_whole_chain_not_half_of_it():
    # One core; chain a (1.2 cores' worth) cannot be served, chain b (0.5) can: a is rejected whole.
    nfs = [nf("a1", "a", 6e6, 100), nf("a2", "a", 6e6, 100), nf("b1", "b", 5e6, 100)]
    solution = solve(nfs, [1], HZ)
    assert solution["accepted"] == ["b"] and solution["rejected"] == ["a"]
    assert set(solution["placement"]) == {"b1"}
    assert solution["objective"] == pytest.approx(5e6)


def test_weights_decide_which_chain_gets_the_core():
    nfs = [nf("x", "light", 6e6, 100, weight=1), nf("y", "heavy", 6e6, 100, weight=3)]
    solution = solve(nfs, [1], HZ)
    assert solution["accepted"] == ["heavy"]
    assert solution["objective"] == pytest.approx(3 * 6e6)


def test_best_effort_chains_share_the_core_by_weight_objective():
    # No offered rate: the solver gives the core to the most valuable use, here the cheaper NF (more packets a cycle).
    nfs = [nf("cheap", "c1", None, 100), nf("dear", "c2", None, 400)]
    solution = solve(nfs, [1], HZ, serve_offered=False)
    assert solution["throughput_pps"]["c1"] == pytest.approx(1e7, rel=1e-3)
    assert solution["planned_rate_pps"]["cheap"] == pytest.approx(1e7, rel=1e-3)


def test_every_nf_is_planned_at_its_chains_solved_rate():
    nfs = [nf("a1", "a", 4e6, 50), nf("a2", "a", 4e6, 50), nf("b", "b", 2e6, 100), nf("c", "c", 1e6, 100)]
    solution = solve(nfs, [1], HZ)
    assert solution["planned_rate_pps"] == pytest.approx({"a1": 4e6, "a2": 4e6, "b": 2e6, "c": 1e6}, rel=1e-6)


def test_infeasible_problem_names_the_constraint():
    nfs = [nf("a1", "a", 8e6, 200)]
    with pytest.raises(PlacementError, match="core capacity constraint"):
        solve(nfs, [1], HZ, require_all=True)
    with pytest.raises(PlacementError, match="no core"):
        solve(nfs, [], HZ)
