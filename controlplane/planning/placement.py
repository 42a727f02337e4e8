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
that rounds batches."""

from __future__ import annotations

from dataclasses import dataclass

from controlplane.errors import EXIT_BAD_INPUT, TandemError
from controlplane.planning.batch_model import batch_models
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


def solve(
    nfs: list[PlacedNf],
    cores: list[int],
    hz: float,
    upper: int = 1024,
    require_all: bool = False,
    serve_offered: bool = True,
    objective: str = "throughput",
    edges: list[tuple[str, str, float]] | None = None,
) -> dict:
    """Returns {placement: {nf: core}, planned_rate_pps: {nf: pps}, throughput_pps: {chain: pps}, accepted, rejected,
    objective, core_utilisation, cores_used, crossing_edges}. `edges`: (from NF, to NF, share of the chain's
    packets on the edge), for fewest_cores' tie-break. Raises PlacementError naming the constraint when nothing
    satisfies them."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective {objective!r}: one of {OBJECTIVES}")
    if not cores:
        raise PlacementError("infeasible placement: no core to place NFs on (constraint: every NF on one core)")
    if objective == "fewest_cores":
        require_target_rates({nf.chain: nf.rate_pps for nf in nfs})
        require_all = serve_offered = True
    highspy = _solver()
    h = highspy.Highs()
    h.silent()
    chains = list(dict.fromkeys(nf.chain for nf in nfs))
    # The LP works in Mpps and in cores (fractions of hz): numbers near 1 keep the solver well conditioned.
    scale = 1e6
    unbounded = hz / scale  # no chain can exceed one core's cycles at one cycle a packet
    offered = {nf.chain: (nf.rate_pps / scale if nf.rate_pps else None) for nf in nfs}
    y = {c: h.addBinary() for c in chains}
    t = {c: h.addVariable(lb=0, ub=offered[c] if offered[c] is not None else unbounded) for c in chains}
    x, z = {}, {}
    for i, nf in enumerate(nfs):
        for core in cores:
            x[i, core] = h.addBinary()
            z[i, core] = h.addVariable(lb=0)
            h.addConstr(z[i, core] <= (offered[nf.chain] or unbounded) * nf.share * x[i, core])
        h.addConstr(sum(x[i, core] for core in cores) == y[nf.chain])  # integrity: all NFs of a chain, or none
        h.addConstr(sum(z[i, core] for core in cores) == nf.share * t[nf.chain])  # its share of the chain's rate
    for c in chains:
        h.addConstr(t[c] <= (offered[c] or unbounded) * y[c])
        if serve_offered and offered[c] is not None:
            h.addConstr(t[c] >= offered[c] * y[c])
        if require_all:
            h.addConstr(y[c] == 1)
    for core in cores:
        cost = [(k_per_packet(nf, upper) * scale / hz, z[i, core]) for i, nf in enumerate(nfs)]
        h.addConstr(sum(coefficient * variable for coefficient, variable in cost) <= 1)
    crossing = {}
    if objective == "throughput":
        h.maximize(sum(nf.weight * nf.share * t[nf.chain] for nf in nfs) if nfs else 0)
    else:
        crossing = _fewest_cores_objective(h, nfs, cores, x, edges or [], offered)

    status = h.modelStatusToString(h.getModelStatus())
    if status == "Infeasible":
        raise PlacementError(_why_infeasible(nfs, cores, hz, upper, serve_offered))
    if status != "Optimal":
        raise PlacementError(f"the placement solver stopped without an optimum: {status}")

    placement, rates = {}, {c: h.val(t[c]) * scale for c in chains}
    for i, nf in enumerate(nfs):
        for core in cores:
            if h.val(x[i, core]) > 0.5:
                placement[nf.name] = core
    planned = {nf.name: rates[nf.chain] * nf.share for nf in nfs}
    utilisation = {
        core: sum(planned[nf.name] * k_per_packet(nf, upper) for nf in nfs if placement.get(nf.name) == core) / hz
        for core in cores
    }
    accepted = [c for c in chains if h.val(y[c]) > 0.5]
    return {
        "placement": placement,
        "planned_rate_pps": planned,
        "throughput_pps": rates,
        "accepted": accepted,
        "rejected": [c for c in chains if c not in accepted],
        "objective_kind": objective,
        "objective": h.getInfo().objective_function_value * (scale if objective == "throughput" else 1),
        "core_utilisation": utilisation,
        "cores_used": sorted({core for core in placement.values()}),
        "crossing_edges": [[a, b] for (a, b) in crossing if placement.get(a) != placement.get(b)],
        "solver": "HiGHS (highspy), mixed-integer linear program",
    }


def _fewest_cores_objective(
    h, nfs: list[PlacedNf], cores: list[int], x: dict, edges: list[tuple[str, str, float]], offered: dict
) -> dict:
    """Adds μNF-MC's objective to `h` and solves: cores used first, then the traffic between cores. Returns the
    edges' crossing variables."""
    index = {nf.name: i for i, nf in enumerate(nfs)}
    chain_of = {nf.name: nf.chain for nf in nfs}
    used = {core: h.addBinary() for core in cores}
    for i, _ in enumerate(nfs):
        for core in cores:
            h.addConstr(x[i, core] <= used[core])
    for before, after in zip(cores, cores[1:], strict=False):
        h.addConstr(used[before] >= used[after])  # cores are alike: use them in order (fewer symmetric optima)
    traffic = {(a, b): share * offered[chain_of[a]] for a, b, share in edges if a in index and b in index}
    total = sum(traffic.values())
    crossing = {}
    for (a, b), _ in traffic.items():
        crossing[a, b] = h.addVariable(lb=0, ub=1)
        for core in cores:
            h.addConstr(crossing[a, b] >= x[index[a], core] - x[index[b], core])
    # The crossing term stays below one core (its weights sum to at most 1/2): the core count always comes first.
    h.minimize(sum(used.values()) + sum((0.5 * traffic[e] / total) * crossing[e] for e in crossing if total > 0))
    return crossing


def k_per_packet(nf: PlacedNf, upper: int) -> float:
    """Cycles a packet costs at the upper batch bound: the slope plus the per-batch overhead shared by the batch."""
    return max(nf.k_cycles + nf.c_cycles / upper, 1e-6)


def _why_infeasible(nfs: list[PlacedNf], cores: list[int], hz: float, upper: int, serve_offered: bool) -> str:
    def need(nf: PlacedNf) -> float:
        return (nf.rate_pps or 0) * nf.share * k_per_packet(nf, upper) / hz

    total = sum(need(nf) for nf in nfs)
    if serve_offered and total > len(cores):
        return (
            f"infeasible placement: serving every chain's offered rate needs {total:.2f} cores of NF work but the core "
            f"capacity constraint allows {len(cores)} (cores {cores}); lower the rates or add cores"
        )
    biggest = max(nfs, key=need)
    return (
        f"infeasible placement: NF {biggest.name} alone needs {need(biggest):.2f} of a core "
        "at its chain's offered rate "
        f"(core capacity constraint), or the chains do not fit the cores whole (chain integrity constraint)"
    )


def place_config(
    config: dict, source: str, options: dict, require_all: bool, say=None, objective: str = "throughput"
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
