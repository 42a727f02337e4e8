"""Bubble's placement model on small instances whose optimum is known."""

from __future__ import annotations

import pytest

from controlplane.planning.placement import PlacedNf, PlacementError, solve

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


def shared(name, chain, rate, k, share):
    return PlacedNf(name=name, chain=chain, rate_pps=rate, weight=1.0, k_cycles=k, c_cycles=0.0, share=share)


def test_a_graph_node_is_charged_only_for_the_packets_that_reach_it():
    # 6 Mpps at 100 cycles: the classifier alone is 0.6 of a core; each branch sees half the packets (0.3), so the
    # graph fits one core and a half, where charging every node the chain's rate (1.5 cores) would not fit on 1.4.
    nfs = [shared("cls", "g", 6e6, 100, 1.0), shared("http", "g", 6e6, 100, 0.5), shared("other", "g", 6e6, 100, 0.5)]
    solution = solve(nfs, [1, 2], HZ, require_all=True)
    assert solution["planned_rate_pps"] == pytest.approx({"cls": 6e6, "http": 3e6, "other": 3e6}, rel=1e-6)
    assert sum(solution["core_utilisation"].values()) == pytest.approx(1.2, rel=1e-6)
    with pytest.raises(PlacementError, match="core capacity constraint"):
        solve([shared(n.name, "g", 6e6, 100, 1.0) for n in nfs], [1, 2], HZ, require_all=True)


def line(count, rate, k):
    names = [f"t{i}" for i in range(count)]
    return [shared(name, "c", rate, k, 1.0) for name in names], [
        (a, b, 1.0) for a, b in zip(names, names[1:], strict=False)
    ]


def test_fewest_cores_packs_consecutive_mnfs_until_a_core_is_full():
    # μNF-MC: 6 decrementers of 0.3 core each at the target rate: 3 fit a core (0.9), so 2 cores, each holding a run
    # of consecutive ones (one edge crosses), never an interleaving that would send packets back and forth.
    nfs, edges = line(6, 3e6, 100)
    solution = solve(nfs, [1, 2, 3, 4], HZ, objective="fewest_cores", edges=edges)
    assert solution["cores_used"] == [1, 2]
    assert solution["crossing_edges"] == [["t2", "t3"]]
    assert all(u <= 1 + 1e-6 for u in solution["core_utilisation"].values())


def test_fewest_cores_cuts_the_edge_that_carries_the_least_traffic():
    # a (0.54 core) -> b (0.42) carries every packet, b -> c (0.24) only the 10 % that b passes on. Together they
    # need 1.2 cores, so 2; both cuts fit ({a, b} | {c} and {a} | {b, c}), and the cheap one is b | c.
    nfs = [shared("a", "g", 6e6, 90, 1.0), shared("b", "g", 6e6, 70, 1.0), shared("c", "g", 6e6, 400, 0.1)]
    solution = solve(nfs, [1, 2], HZ, objective="fewest_cores", edges=[("a", "b", 1.0), ("b", "c", 0.1)])
    assert solution["cores_used"] == [1, 2]
    assert solution["crossing_edges"] == [["b", "c"]]


def test_fewest_cores_names_what_it_cannot_do():
    nfs, edges = line(4, 3e6, 400)  # 1.2 cores each
    with pytest.raises(PlacementError, match="core capacity constraint"):
        solve(nfs, [1, 2, 3, 4], HZ, objective="fewest_cores", edges=edges)
    with pytest.raises(PlacementError, match="target rate.*chain c"):
        solve([shared("x", "c", None, 100, 1.0)], [1], HZ, objective="fewest_cores")
