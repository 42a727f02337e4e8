"""The placement search at scale: first fit as its start, a time limit with the gap it proved, blocks of cores for
instances too large for one program, and the optimum still found where an exhaustive search can check it."""

from __future__ import annotations

import itertools
import random

import pytest

from controlplane.planning import placement
from controlplane.planning.first_fit import first_fit
from controlplane.planning.placement import PlacedNf, k_per_packet, solve

HZ = 1e9  # one core = 1e9 cycles a second


def random_chains(rng: random.Random, chains: int, length: int, cores: int, load: float) -> list[PlacedNf]:
    """`chains` lines of `length` NFs whose work adds up to about `load` of `cores` cores."""
    nfs = []
    for c in range(chains):
        costs = [rng.uniform(50, 400) for _ in range(length)]
        rate = load * cores * HZ / chains / sum(costs) * rng.uniform(0.5, 1.5)
        nfs += [PlacedNf(f"c{c}.{k}", f"c{c}", rate, rng.choice([1.0, 2.0]), cost, 0.0) for k, cost in enumerate(costs)]
    return nfs


def line_edges(nfs: list[PlacedNf]) -> list[tuple[str, str, float]]:
    return [(a.name, b.name, 1.0) for a, b in zip(nfs, nfs[1:], strict=False) if a.chain == b.chain]


def assert_feasible(nfs: list[PlacedNf], solution: dict, room: dict[int, float] | None = None) -> None:
    """Every accepted chain whole at its offered rate, no NF of a rejected one placed, no core over its cycles (over
    its `room`, where it runs other NFs)."""
    room = room or {}
    for nf in nfs:
        if nf.chain in solution["accepted"]:
            assert nf.name in solution["placement"], nf.name
            assert solution["throughput_pps"][nf.chain] == pytest.approx(nf.rate_pps)
        else:
            assert nf.name not in solution["placement"], nf.name
    load: dict[int, float] = {}
    for nf in nfs:
        if nf.name in solution["placement"]:
            core = solution["placement"][nf.name]
            load[core] = load.get(core, 0.0) + nf.rate_pps * nf.k_cycles / HZ
    assert all(value <= room.get(core, 1.0) + 1e-6 for core, value in load.items()), load


def exhaustive(nfs: list[PlacedNf], cores: list[int], objective: str, room: dict[int, float] | None = None) -> float:
    """The model's optimum by trying every NF-to-core map (None = not placed), as the program states it; a core in
    `room` runs other NFs already: it has that share left, and is not counted as a new core."""
    room = room or {}
    edges = line_edges(nfs)
    traffic = {(a, b): nfs_by_name(nfs)[a].rate_pps for a, b, _ in edges}
    best = None
    for choice in itertools.product([None, *cores], repeat=len(nfs)):
        where = dict(zip((nf.name for nf in nfs), choice, strict=True))
        chains = {nf.chain for nf in nfs}
        accepted = {c for c in chains if all(where[nf.name] is not None for nf in nfs if nf.chain == c)}
        if any(where[nf.name] is not None and nf.chain not in accepted for nf in nfs):
            continue
        load: dict[int, float] = {}
        for nf in nfs:
            if where[nf.name] is not None:
                load[where[nf.name]] = load.get(where[nf.name], 0.0) + nf.rate_pps * nf.k_cycles / HZ
        if any(value > room.get(core, 1.0) + 1e-9 for core, value in load.items()):
            continue
        if objective == "throughput":
            value = sum(nf.weight * nf.rate_pps for nf in nfs if nf.chain in accepted)
            best = value if best is None else max(best, value)
        elif accepted == chains:
            apart = sum(traffic[a, b] for a, b, _ in edges if where[a] != where[b])
            value = len(set(load) - set(room)) + 0.5 * apart / sum(traffic.values())
            best = value if best is None else min(best, value)
    return best


def nfs_by_name(nfs):
    return {nf.name: nf for nf in nfs}


@pytest.mark.parametrize("in_use", [False, True], ids=["new cores", "core 1 in use"])
@pytest.mark.parametrize("objective", ["throughput", "fewest_cores"])
def test_the_search_finds_the_optimum_an_exhaustive_search_finds(objective, in_use):
    # 40 random instances of 3 chains of 2 NFs on 3 cores (4^6 maps each): loads from a light fit to more than the
    # cores carry (throughput must reject) or just under them (fewest cores packs tight). In use: core 1 runs other
    # NFs already (the operator's shared cores), with 20-90 % of it left, which no placement may pass.
    rng = random.Random(7 if not in_use else 11)
    checked = 0
    for _ in range(40):
        load = rng.uniform(0.5, 1.3) if objective == "throughput" else rng.uniform(0.3, 0.9)
        nfs = random_chains(rng, 3, 2, 3, load)
        room = {1: rng.uniform(0.2, 0.9)} if in_use else {}
        best = exhaustive(nfs, [1, 2, 3], objective, room)
        if best is None:
            continue
        solution = solve(nfs, [1, 2, 3], HZ, objective=objective, edges=line_edges(nfs), room=room)
        assert solution["stopped"] == "optimal"
        assert solution["objective"] == pytest.approx(best, rel=1e-4)
        assert solution["optimality_gap"] <= 1e-4
        assert_feasible(nfs, solution, room)
        checked += 1
    assert checked >= 25


@pytest.mark.parametrize("objective", ["throughput", "fewest_cores"])
def test_first_fit_is_a_feasible_start(objective):
    rng = random.Random(3)

    def cheapest(nf):
        return k_per_packet(nf, 1024) / HZ

    for _ in range(50):
        nfs = random_chains(rng, 12, 3, 6, rng.uniform(0.4, 1.4))
        fit = first_fit(nfs, list(range(6)), lambda nf, core: cheapest(nf), cheapest, objective)
        load: dict[int, float] = {}
        for i, core in fit.core_of.items():
            load[core] = load.get(core, 0.0) + nfs[i].rate_pps * nfs[i].k_cycles / HZ
        assert all(value <= 1 for value in load.values())
        assert {nfs[i].chain for i in fit.core_of} == set(fit.rate_pps)
        assert set(fit.rate_pps) | set(fit.rejected) == {nf.chain for nf in nfs}
        if objective == "fewest_cores":  # cores fill in order: the program's "used in order" holds for the start
            used = sorted(load)
            assert used == list(range(len(used)))


def test_a_search_out_of_time_answers_with_its_best_placement_and_the_gap_it_proved():
    # 64 NFs over 16 cores at fewest cores: before the time limit, HiGHS searched this for minutes without an
    # answer. At 10 ms it cannot prove an optimum; it answers with the first-fit start or better.
    rng = random.Random(1)
    nfs = random_chains(rng, 16, 4, 16, 0.6)
    solution = solve(nfs, list(range(16)), HZ, objective="fewest_cores", edges=line_edges(nfs), time_limit_s=0.01)
    assert solution["stopped"] == "time limit"
    assert solution["accepted"] == [f"c{c}" for c in range(16)]
    assert_feasible(nfs, solution)
    assert solution["bound"] <= solution["objective"]
    assert solution["optimality_gap"] == pytest.approx(
        (solution["objective"] - solution["bound"]) / solution["objective"]
    )
    work = sum(nf.rate_pps * nf.k_cycles / HZ for nf in nfs)
    assert solution["bound"] >= work - 1e-6  # no fewer cores than the work adds up to


@pytest.mark.parametrize("objective", ["throughput", "fewest_cores"])
def test_an_instance_too_large_for_one_program_is_solved_in_blocks(objective):
    rng = random.Random(5)
    chains, cores = 150, 48  # 450 NFs x 48 cores: past MAX_PROGRAM_CHOICES
    assert chains * 3 * cores > placement.MAX_PROGRAM_CHOICES
    load = 1.3 if objective == "throughput" else 0.75
    nfs = random_chains(rng, chains, 3, cores, load)
    solution = solve(nfs, list(range(cores)), HZ, objective=objective, edges=line_edges(nfs), time_limit_s=3)
    assert "block" in solution["method"] or "first fit over whole nodes" in solution["method"]
    assert solution["stopped"] in ("time limit", "each block optimal")
    assert_feasible(nfs, solution)
    if objective == "throughput":
        assert solution["rejected"]  # 1.3x the cores' work: some chains cannot be served
        assert solution["objective"] <= solution["bound"]
    else:
        assert solution["accepted"] == [f"c{c}" for c in range(chains)]
        assert solution["cores_used"] == list(range(len(solution["cores_used"])))  # renumbered onto the first cores
        assert solution["bound"] <= solution["objective"]
    assert 0 <= solution["optimality_gap"] < 0.1


def test_across_nodes_fewest_cores_parts_no_chain_that_fits_one_node():
    # Two nodes of 2 cores. Chain a: 4 NFs of 0.45 core (1.8 cores); chain b: 2 NFs of 0.45. Three cores carry them
    # (2.7 cores of work), and so does every way of cutting a across the nodes; the fewest packets on the wire
    # keeps a whole on one node and b on the other, with one edge of a between that node's cores.
    nfs = [PlacedNf(f"a{k}", "a", 4.5e6, 1.0, 100, 0.0) for k in range(4)]
    nfs += [PlacedNf(f"b{k}", "b", 4.5e6, 1.0, 100, 0.0) for k in range(2)]
    node_of = {1: "east", 2: "east", 3: "west", 4: "west"}
    solution = solve(nfs, [1, 2, 3, 4], HZ, objective="fewest_cores", edges=line_edges(nfs), node_of=node_of)
    assert len(solution["cores_used"]) == 3
    assert solution["edges_between_nodes"] == []
    assert len({solution["node_of"][f"a{k}"] for k in range(4)}) == 1
    assert solution["node_of"]["b0"] != solution["node_of"]["a0"]
    assert solution["crossing_edges"] == [["a1", "a2"]]  # a's cheapest cut between its node's two cores
    assert_feasible(nfs, solution)


def test_across_nodes_a_chain_larger_than_a_node_crosses_once():
    # One chain of 6 NFs of 0.45 core (2.7 cores, 3 cores of two NFs) over two nodes of 2 cores: it spans both, and it
    # crosses between them on exactly one edge (a line cut once), the blocks of a large instance never span nodes.
    nfs = [PlacedNf(f"n{k}", "c", 4.5e6, 1.0, 100, 0.0) for k in range(6)]
    node_of = {1: "east", 2: "east", 3: "west", 4: "west"}
    solution = solve(nfs, [1, 2, 3, 4], HZ, objective="fewest_cores", edges=line_edges(nfs), node_of=node_of)
    assert len(solution["edges_between_nodes"]) == 1
    assert_feasible(nfs, solution)


def test_across_nodes_a_pinned_nf_goes_on_its_node_and_what_cannot_fit_there_is_refused():
    # A chain of 3 NFs of 0.3 core fits one node; its first NF pinned to east and its last to west, it crosses once
    # more than it would, and exactly where its pins say. First fit, which knows no pins, is no start then.
    nfs = [PlacedNf(f"n{k}", "c", 3e6, 1.0, 100, 0.0) for k in range(3)]
    node_of = {1: "east", 2: "east", 3: "west", 4: "west"}
    kwargs = {"objective": "fewest_cores", "edges": line_edges(nfs), "node_of": node_of}
    assert solve(nfs, [1, 2, 3, 4], HZ, **kwargs)["edges_between_nodes"] == []
    solution = solve(nfs, [1, 2, 3, 4], HZ, pinned={"n0": "east", "n2": "west"}, **kwargs)
    assert solution["node_of"]["n0"] == "east" and solution["node_of"]["n2"] == "west"
    assert len(solution["edges_between_nodes"]) == 1 and len(solution["cores_used"]) == 2
    assert_feasible(nfs, solution)
    # Pinned to east, three NFs of 0.8 core need 2.4 of its 2 cores (the four cores would carry them).
    heavy = [PlacedNf(f"h{k}", f"h{k}", 8e6, 1.0, 100, 0.0) for k in range(3)]
    with pytest.raises(placement.PlacementError, match="NFs h0, h1, h2 go on node east .* offers 2 .pinned NF"):
        solve(
            heavy,
            [1, 2, 3, 4],
            HZ,
            objective="fewest_cores",
            node_of=node_of,
            pinned=dict.fromkeys(["h0", "h1", "h2"], "east"),
        )
    with pytest.raises(placement.PlacementError, match="NF n0 goes on node north .* which offers no core"):
        solve(nfs, [1, 2, 3, 4], HZ, pinned={"n0": "north"}, **kwargs)


def test_a_large_instance_across_nodes_is_solved_a_node_at_a_time():
    rng = random.Random(11)
    nfs = random_chains(rng, 120, 3, 48, 0.6)
    node_of = {core: f"node{core // 12}" for core in range(48)}  # 4 nodes of 12 cores
    solution = solve(
        nfs, list(range(48)), HZ, objective="fewest_cores", edges=line_edges(nfs), time_limit_s=3, node_of=node_of
    )
    assert_feasible(nfs, solution)
    assert solution["accepted"] == [f"c{c}" for c in range(120)]
    assert solution["edges_between_nodes"] == []  # every chain fits a node: none is parted between two
    for node in {f"node{n}" for n in range(4)}:  # each node's cores in use are its first ones
        used = sorted(core for core in solution["cores_used"] if node_of[core] == node)
        first = sorted(core for core in node_of if node_of[core] == node)[: len(used)]
        assert used == first


def test_across_nodes_each_node_counts_its_own_tsc_rate_and_costs():
    # Three NFs of 100 cycles at 5 Mpps: half a core each at 1 GHz (1.5 cores), a quarter at 2 GHz (one core).
    nfs = [PlacedNf(f"n{k}", "c", 5e6, 1.0, 100, 0.0) for k in range(3)]
    node_of = {1: "slow", 2: "slow", 3: "fast", 4: "fast"}
    kwargs = {"objective": "fewest_cores", "edges": line_edges(nfs), "node_of": node_of}
    solution = solve(nfs, [1, 2, 3, 4], HZ, node_hz={"fast": 2e9}, **kwargs)
    assert solution["cores_used"] == [3]
    assert solution["core_utilisation"][3] == pytest.approx(0.75)
    assert solution["bound"] == 1  # the counting bound takes each NF on its cheapest node
    # The same NFs where the fast node measured them at 300 cycles (0.75 of a core each there): two cores either
    # way, and the slow node's two cores carry them with 0.5 + 0.5 and 0.5, the fast node's would need three.
    costly = [PlacedNf(nf.name, nf.chain, nf.rate_pps, 1.0, 100, 0.0, node_cycles={"fast": (300.0, 0.0)}) for nf in nfs]
    solution = solve(costly, [1, 2, 3, 4], HZ, node_hz={"fast": 2e9}, **kwargs)
    assert solution["cores_used"] == [1, 2] and set(solution["node_of"].values()) == {"slow"}


def test_one_nf_on_cores_that_run_others_already_is_placed_where_it_fits():
    # Fewest cores with nothing to minimise (the operator's second chain of one NF, every core running others: no new
    # core, no edge): any core it fits is as good, and the program answers with one (HiGHS takes no constant
    # objective).
    nf = PlacedNf("small.only", "small", 1e5, 1.0, 2000, 0.0)  # 20 % of a core
    solution = solve([nf], [1, 2], HZ, objective="fewest_cores", edges=[], room={1: 0.1, 2: 0.3})
    assert solution["stopped"] == "optimal" and solution["accepted"] == ["small"]
    assert_feasible([nf], solution, {1: 0.1, 2: 0.3})
