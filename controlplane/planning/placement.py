"""NF placement as a mixed-integer linear program solved by HiGHS: Bubble's (Algorithm 1, first step; equation 2),
generalised from chains to graphs, and μNF's clustering of consecutive μNFs onto as few cores as carry them (μNF-MC).

Variables: x[i,J] = NF i on core J (binary), y[C] = chain C accepted (binary), z[i,J] = packets per second NF i
processes on core J. Constraints:
  - chain integrity (3, 4): every NF of an accepted chain is on exactly one core, of a rejected one on none;
  - flow: NF i processes its share s_i of its chain's throughput (a line: s_i = 1; a graph: the share of the chain's
    packets that reach it, controlplane/planning/rate_shares.py), the throughput at most the offered rate (2);
  - with `serve_offered`, an accepted chain gets its whole offered rate (the SLO);
  - core capacity (1): sum over the core of z[i,J] * (k_i + c_i / b_max) cycles <= the core's cycles per second.
Objectives:
  - "throughput" (Bubble): maximise sum of w_i * throughput_i;
  - "fewest_cores" (μNF-MC): every chain at its offered rate on as few cores as possible, u[J] = core J used
    (x[i,J] <= u[J]); among those, the least traffic crossing cores: d[e] >= x[a,J] - x[b,J] for every core is 1
    when edge e's ends are apart, weighted by the edge's packets a second and scaled below one core's worth, so
    consecutive μNFs that carry the most traffic share a core (and its warm cache).

Equation 2's b_i / T_i is not linear in the batch sizes; the per-packet cost is taken at the upper batch bound
(k + c/b_max, what the runtime pays under load). Each NF is given its chain's solved rate as its planned rate;
Bubble turns planned rates into initial batches (schedulers/bubble/batch_size.cc, initial_batch), the one place
that rounds batches.

The search (solve) starts from first fit (first_fit.py), stops at a time limit with the best placement found and
the gap it proved (placement_program.py), and cuts an instance too large for one program into blocks of cores
(placement_blocks.py); where the cores sit on several nodes, fewest cores parts the fewest packets between them."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

from controlplane.errors import EXIT_BAD_INPUT, TandemError
from controlplane.planning.batch_model import batch_models
from controlplane.planning.first_fit import fewest_cores_bound, first_fit, throughput_bound
from controlplane.planning.infeasible_placement import capacity, why_infeasible
from controlplane.planning.placement_blocks import BLOCK_CORES, chunks_of, solve_by_blocks
from controlplane.planning.placement_program import ProgramResult, crossing_cost, nodes_of, solve_program
from controlplane.planning.rate_shares import chain_shares


class PlacementError(TandemError):
    """No placement satisfies the constraints, or the solver is missing."""

    exit_status = EXIT_BAD_INPUT


@dataclass
class PlacedNf:
    name: str
    chain: str
    rate_pps: float | None  # offered; None = as fast as possible
    weight: float
    k_cycles: float
    c_cycles: float
    share: float = 1.0  # of the chain's packets that reach this NF
    node_cycles: dict[str, tuple[float, float]] | None = None  # (k, c) on a node whose profile differs


OBJECTIVES = ("throughput", "fewest_cores")


def _solver():
    try:
        import highspy
    except ImportError:
        raise PlacementError(
            "placement needs the HiGHS solver (Python package highspy), which is not installed: "
            "run scripts/setup.sh, or pip install highspy"
        ) from None
    return highspy


def require_target_rates(rates: dict[str, float | None]) -> None:
    """fewest_cores serves every chain at its target rate: one without a rate (by chain name) is refused."""
    unserved = sorted(chain for chain, rate in rates.items() if not rate)
    if unserved:
        raise PlacementError(
            f"fewest-cores placement needs every chain's target rate; chain {unserved[0]} has none (traffic.rate)"
        )


# A program with more NF-on-core choices than this is solved in blocks of cores: past it, building the program
# in Python and HiGHS's search both grow past seconds (bench/placement_scale.py measures both ways).
MAX_PROGRAM_CHOICES = 4000
DEFAULT_TIME_LIMIT_S = 20.0


def solve(
    nfs: list[PlacedNf],
    cores: list[int],
    hz: float,
    upper: int = 1024,
    require_all: bool = False,
    serve_offered: bool = True,
    objective: str = "throughput",
    edges: list[tuple[str, str, float]] | None = None,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    node_of: dict[int, str] | None = None,
    node_hz: dict[str, float] | None = None,
    room: dict[int, float] | None = None,
    together: list[list[str]] | None = None,
    pinned: dict[str, str] | None = None,
) -> dict:
    """Returns {placement: {nf: core}, planned_rate_pps: {nf: pps}, throughput_pps: {chain: pps}, accepted, rejected,
    objective, bound, optimality_gap, stopped, method, solve_seconds, core_utilisation, cores_used, crossing_edges}.
    `edges`: (from NF, to NF, share of the chain's packets on the edge), for fewest_cores' tie-break. `node_of`:
    each core's node where the cores sit on several machines (fewest cores then parts the fewest packets between
    nodes, and blocks never span two); `node_hz`: a node's TSC rate where it is not `hz`, and an NF's
    `node_cycles` its costs on a node where they are not k and c. The search starts from first fit and stops after
    `time_limit_s` with the best placement found and the gap it proved. `room`: cores that already run other NFs,
    with the share of each left: they take these NFs up to it, and fewest cores counts only the new cores it uses.
    `together`: groups of NFs that go on one node (a graph's blocks between the edges a wire may carry,
    graph_cuts.py). `pinned`: NFs that go on a given node (NF -> node: a chain's first or last NF where its port
    is); they make the instance one program, whatever its size. Raises PlacementError naming the constraint when
    nothing satisfies them."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective {objective!r}: one of {OBJECTIVES}")
    if not cores:
        raise PlacementError("infeasible placement: no core to place NFs on (constraint: every NF on one core)")
    if objective == "fewest_cores":
        require_target_rates({nf.chain: nf.rate_pps for nf in nfs})
        require_all = serve_offered = True
    room = room or {}
    if any(core not in cores or not 0 < share <= 1 for core, share in room.items()):
        raise ValueError(f"room: shares in (0, 1] of cores in {cores}, got {room}")
    highspy = _solver()
    began = time.monotonic()
    node_of = node_of or {}
    allowed = _pinned_cores(nfs, cores, node_of, pinned or {})
    seconds, cheapest = _costs(cores, node_of, node_hz or {}, hz, upper)
    whole = bool(allowed) or len(nfs) * len(cores) <= MAX_PROGRAM_CHOICES
    chunks = [cores] if whole else chunks_of(cores, node_of)
    start = first_fit(nfs, cores, seconds, cheapest, objective, blocks=chunks, room=room)
    program = functools.partial(
        solve_program,
        highspy,
        seconds=seconds,
        require_all=require_all,
        serve_offered=serve_offered,
        objective=objective,
        node_of=node_of,
        room=room,
        allowed=allowed,
    )
    if whole:
        index = {nf.name: i for i, nf in enumerate(nfs)}
        groups = [[index[name] for name in group] for group in together or [] if len(group) > 1]
        usable = not (require_all and start.rejected) and _keeps_together(start.core_of, groups, node_of)
        usable = usable and all(start.core_of.get(i) in where for i, where in allowed.items())
        result = program(
            nfs, cores, edges=edges or [], start=start if usable else None, time_limit_s=time_limit_s, together=groups
        )
        method = "one program, started from first fit"
    else:
        result = solve_by_blocks(program, nfs, chunks, edges or [], start, require_all, began + time_limit_s)
        method = f"one program per block of {BLOCK_CORES} cores, with the chains first fit put in it, started from it"
        if result.status in ("optimal", "time limit"):
            # Blocks cost each block's leftover; first fit over whole nodes (all cores, where they are on one) may
            # pack tighter: the better one wins. A chain still stays on one node where it fits one.
            whole_nodes = list(nodes_of(cores, node_of).values())
            fit = first_fit(nfs, cores, seconds, cheapest, objective, blocks=whole_nodes, room=room)
            plain = _from_first_fit(fit, nfs, result.status)
            if not (require_all and fit.rejected) and _better(
                plain, result, nfs, cores, edges or [], objective, node_of, room
            ):
                result, method = plain, "first fit over whole nodes' cores (better than the blocks' programs)"
            result.status = "time limit" if result.status == "time limit" else "each block optimal"
    if result.status == "infeasible":
        raise PlacementError(
            why_infeasible(nfs, cores, cheapest, serve_offered, room, together or [], node_of, pinned or {})
        )
    if result.status.startswith("no placement found for chain"):
        raise PlacementError(result.status)
    if result.status not in ("optimal", "time limit", "each block optimal"):
        raise PlacementError(
            f"the placement solver stopped without a placement: {result.status} (a longer --time-limit may find one)"
        )
    if objective == "fewest_cores":
        result = _compacted(result, cores, nfs, edges or [], node_of, room)
    bound = _bound(result, nfs, cores, cheapest, objective, room)
    solution = _solution(nfs, cores, seconds, objective, result, bound, method, time.monotonic() - began)
    if len(nodes_of(cores, node_of)) > 1:
        solution["node_of"] = {nf: node_of[core] for nf, core in solution["placement"].items()}
        solution["edges_between_nodes"] = [
            [a, b] for a, b in solution["crossing_edges"] if solution["node_of"][a] != solution["node_of"][b]
        ]
    return solution


def _pinned_cores(nfs: list[PlacedNf], cores: list[int], node_of: dict[int, str], pinned: dict[str, str]):
    """NF index -> the cores it may take, for each NF pinned to a node; PlacementError where that node offers none."""
    allowed = {}
    for i, nf in enumerate(nfs):
        if nf.name in pinned:
            allowed[i] = {core for core in cores if node_of.get(core, "") == pinned[nf.name]}
            if not allowed[i]:
                raise PlacementError(
                    f"infeasible placement: NF {nf.name} goes on node {pinned[nf.name]} (its chain's port is there), "
                    "which offers no core with room (pinned NF constraint)"
                )
    return allowed


def _keeps_together(core_of: dict[int, int], groups: list[list[int]], node_of: dict[int, str]) -> bool:
    """Whether a placement has each group's NFs on one node (first fit, which knows no groups, may part one)."""
    return all(len({node_of.get(core_of.get(i)) for i in group}) == 1 for group in groups)


def _from_first_fit(fit, nfs, status: str) -> ProgramResult:
    order = list(dict.fromkeys(nf.chain for nf in nfs))
    result = ProgramResult(status, core_of=dict(fit.core_of), accepted=[c for c in order if c in fit.rate_pps])
    result.rate_pps = {chain: fit.rate_pps.get(chain, 0.0) for chain in order}
    result.objective = sum(nf.weight * nf.share * result.rate_pps[nf.chain] for nf in nfs)
    return result


def _better(
    candidate: ProgramResult, incumbent: ProgramResult, nfs, cores, edges, objective: str, node_of, room
) -> bool:
    if objective == "throughput":
        return candidate.objective > incumbent.objective
    mine = _fewest_cores_value(candidate.core_of, nfs, edges, cores, node_of, room)
    return mine < _fewest_cores_value(incumbent.core_of, nfs, edges, cores, node_of, room)


def _fewest_cores_value(core_of: dict[int, int], nfs, edges, cores, node_of, room) -> float:
    """Fewest cores' objective for a placement: new cores used (not those in `room`) + the crossing term (below
    1/2). Renumbering new cores within a node changes neither."""
    new = {core for core in core_of.values() if core not in room}
    return len(new) + crossing_cost(core_of, nfs, edges, cores, node_of)[0]


def _compacted(result: ProgramResult, cores: list[int], nfs, edges, node_of: dict[int, str], room) -> ProgramResult:
    """Fewest cores: the new cores in use renumbered onto each node's first new cores (a node's new cores are
    alike), and the objective (new cores + the crossing term, below 1/2) for the whole placement."""
    renumber, used = {core: core for core in room}, set(result.core_of.values())
    for members in nodes_of([core for core in cores if core not in room], node_of).values():
        renumber.update(zip([core for core in members if core in used], members, strict=False))
    result.core_of = {i: renumber[core] for i, core in result.core_of.items()}
    _, result.crossing, _ = crossing_cost(result.core_of, nfs, edges, cores, node_of)
    result.objective = _fewest_cores_value(result.core_of, nfs, edges, cores, node_of, room)
    return result


def _bound(result: ProgramResult, nfs, cores, cheapest, objective: str, room) -> float:
    """The best objective any placement could reach: HiGHS's proof where one program was solved, never weaker than
    the counting bound (first_fit.py)."""
    if objective == "fewest_cores":
        counted = fewest_cores_bound(nfs, cheapest, sum(room.values()))
        return max(counted, result.dual_bound or 0.0)
    counted = throughput_bound(nfs, capacity(cores, room), cheapest)
    return min(counted, result.dual_bound) if result.dual_bound is not None else counted


def _solution(nfs, cores, cost, objective, result: ProgramResult, bound: float, method: str, seconds: float):
    placement = {nfs[i].name: core for i, core in sorted(result.core_of.items())}
    rates = result.rate_pps
    planned = {nf.name: rates[nf.chain] * nf.share for nf in nfs}
    utilisation = {
        core: sum(planned[nf.name] * cost(nf, core) for nf in nfs if placement.get(nf.name) == core) for core in cores
    }
    objective_value = result.objective
    gap = abs(objective_value - bound) / max(abs(objective_value), abs(bound), 1e-12)
    return {
        "placement": placement,
        "planned_rate_pps": planned,
        "throughput_pps": rates,
        "accepted": result.accepted,
        "rejected": [c for c in rates if c not in result.accepted],
        "objective_kind": objective,
        "objective": objective_value,
        "bound": bound,
        "optimality_gap": gap,
        "stopped": result.status,
        "method": method,
        "solve_seconds": seconds,
        "core_utilisation": utilisation,
        "cores_used": sorted({core for core in placement.values()}),
        "crossing_edges": [[a, b] for (a, b) in result.crossing],
        "solver": "HiGHS (highspy), mixed-integer linear program",
    }


def _costs(cores: list[int], node_of: dict[int, str], node_hz: dict[str, float], hz: float, upper: int):
    """seconds(nf, core): the seconds of that core a packet of the NF takes, at its node's costs and TSC rate;
    cheapest(nf): the least of them over the nodes."""

    def on_node(nf: PlacedNf, node: str) -> float:
        return k_per_packet(nf, upper, node) / node_hz.get(node, hz)

    nodes = sorted({node_of.get(core, "") for core in cores})

    def seconds(nf: PlacedNf, core: int) -> float:
        return on_node(nf, node_of.get(core, ""))

    def cheapest(nf: PlacedNf) -> float:
        return min(on_node(nf, node) for node in nodes)

    return seconds, cheapest


def k_per_packet(nf: PlacedNf, upper: int, node: str = "") -> float:
    """Cycles a packet costs at the upper batch bound: the slope plus the per-batch overhead shared by the batch (on
    `node`, where its profile there differs)."""
    k, c = (nf.node_cycles or {}).get(node, (nf.k_cycles, nf.c_cycles))
    return max(k + c / upper, 1e-6)


def place_config(
    config: dict,
    source: str,
    options: dict,
    require_all: bool,
    say=None,
    objective: str = "throughput",
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
) -> tuple[dict, dict]:
    """Profiles the batch-time models (cached), measures how each graph chain splits its traffic (cached), and
    solves the placement for a run config's chains on its placement cores; returns the solution and the models.
    `options` are the run's scheduler options as the data plane resolved them: a scheduler that adapts batches
    (Bubble) declares their bounds there; under any other, an NF takes up to the run's burst a turn."""
    if objective == "fewest_cores":  # before any measurement: a spec the model must refuse costs no profiling run
        require_target_rates({chain["name"]: chain["traffic"]["mean_rate_pps"] for chain in config["chains"]})
    models = batch_models(config, source, say=say)
    shares = chain_shares(config, source, say=say)
    nfs = [
        PlacedNf(
            name=nf["name"],
            chain=chain["name"],
            rate_pps=chain["traffic"]["mean_rate_pps"] or None,
            weight=nf.get("weight", 1.0),
            k_cycles=models[nf["name"]]["k_cycles"],
            c_cycles=models[nf["name"]]["c_cycles"],
            share=shares[chain["name"]]["nfs"][nf["name"]],
        )
        for chain in config["chains"]
        for nf in chain["nfs"]
    ]
    edges = [edge for chain in config["chains"] for edge in shares[chain["name"]]["edges"]]
    hz = next(iter(models.values()))["tsc_hz"]  # the cycles the models count
    solution = solve(
        nfs,
        config["placement_cores"],
        hz,
        options.get("upper_batch", config["burst"]),
        require_all=require_all,
        objective=objective,
        edges=edges,
        time_limit_s=time_limit_s,
    )
    solution["rate_shares"] = {
        chain: {"nfs": entry["nfs"], "source": entry["source"]} for chain, entry in shares.items()
    }
    return solution, models


def placed(config: dict, solution: dict) -> dict:
    """The config with every NF on its solved core and with its planned rate."""
    result = dict(config, placement="spec")
    result["chains"] = [
        dict(
            chain,
            nfs=[
                dict(
                    nf,
                    core=solution["placement"][nf["name"]],
                    planned_rate_pps=solution["planned_rate_pps"][nf["name"]],
                )
                for nf in chain["nfs"]
            ],
        )
        for chain in config["chains"]
    ]
    return result
