"""Bubble's placement (Algorithm 1, first step; equation 2) as a mixed-integer linear program solved by HiGHS.

Variables: x[i,J] = NF i on core J (binary), y[C] = chain C accepted (binary), z[i,J] = packets per second NF i
processes on core J. Constraints:
  - chain integrity (3, 4): every NF of an accepted chain is on exactly one core, of a rejected one on none;
  - flow: the NFs of a chain process the same rate (the chain's throughput), at most its offered rate (2);
  - with `serve_offered`, an accepted chain gets its whole offered rate (the SLO);
  - core capacity (1): sum over the core of z[i,J] * (k_i + c_i / b_max) cycles <= the core's cycles per second.
Objective: maximise sum of w_i * throughput_i.

Equation 2's b_i / T_i is not linear in the batch sizes; the per-packet cost is taken at the upper batch bound
(k + c/b_max, what the runtime pays under load). Each NF is given its chain's solved rate as its planned rate;
Bubble turns planned rates into initial batches (schedulers/bubble/batch_size.cc, initial_batch), the one place
that rounds batches."""
from __future__ import annotations

from dataclasses import dataclass

from controlplane.batch_model import batch_models
from controlplane.errors import EXIT_BAD_INPUT, TandemError


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


def _solver():
    try:
        import highspy
    except ImportError:
        raise PlacementError("placement needs the HiGHS solver (Python package highspy), which is not installed: "
                             "run scripts/setup.sh, or pip install highspy") from None
    return highspy


def solve(nfs: list[PlacedNf], cores: list[int], hz: float, upper: int = 1024,
          require_all: bool = False, serve_offered: bool = True) -> dict:
    """Returns {placement: {nf: core}, batches: {nf: b}, throughput_pps: {chain: pps}, accepted, rejected,
    objective, core_utilisation}. Raises PlacementError naming the constraint when nothing satisfies them."""
    if not cores:
        raise PlacementError("infeasible placement: no core to place NFs on (constraint: every NF on one core)")
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
            h.addConstr(z[i, core] <= (offered[nf.chain] or unbounded) * x[i, core])
        h.addConstr(sum(x[i, core] for core in cores) == y[nf.chain])  # integrity: all NFs of a chain, or none
        h.addConstr(sum(z[i, core] for core in cores) == t[nf.chain])  # every NF processes the chain's rate
    for c in chains:
        h.addConstr(t[c] <= (offered[c] or unbounded) * y[c])
        if serve_offered and offered[c] is not None:
            h.addConstr(t[c] >= offered[c] * y[c])
        if require_all:
            h.addConstr(y[c] == 1)
    for core in cores:
        cost = [(k_per_packet(nf, upper) * scale / hz, z[i, core]) for i, nf in enumerate(nfs)]
        h.addConstr(sum(coefficient * variable for coefficient, variable in cost) <= 1)
    h.maximize(sum(nf.weight * t[nf.chain] for nf in nfs))

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
    utilisation = {core: sum(rates[nf.chain] * k_per_packet(nf, upper) for nf in nfs if placement.get(nf.name) == core) / hz
                   for core in cores}
    accepted = [c for c in chains if h.val(y[c]) > 0.5]
    return {"placement": placement, "planned_rate_pps": {nf.name: rates[nf.chain] for nf in nfs}, "throughput_pps": rates, "accepted": accepted,
            "rejected": [c for c in chains if c not in accepted], "objective": h.getInfo().objective_function_value * scale,
            "core_utilisation": utilisation, "solver": "HiGHS (highspy), mixed-integer linear program"}


def k_per_packet(nf: PlacedNf, upper: int) -> float:
    """Cycles a packet costs at the upper batch bound: the slope plus the per-batch overhead shared by the batch."""
    return max(nf.k_cycles + nf.c_cycles / upper, 1e-6)


def _why_infeasible(nfs: list[PlacedNf], cores: list[int], hz: float, upper: int, serve_offered: bool) -> str:
    need = sum((nf.rate_pps or 0) * k_per_packet(nf, upper) for nf in nfs) / hz
    if serve_offered and need > len(cores):
        return (f"infeasible placement: serving every chain's offered rate needs {need:.2f} cores of NF work but the core "
                f"capacity constraint allows {len(cores)} (cores {cores}); lower the rates or add cores")
    biggest = max(nfs, key=lambda nf: (nf.rate_pps or 0) * k_per_packet(nf, upper))
    return (f"infeasible placement: NF {biggest.name} alone needs "
            f"{(biggest.rate_pps or 0) * k_per_packet(biggest, upper) / hz:.2f} of a core at its chain's offered rate "
            f"(core capacity constraint), or the chains do not fit the cores whole (chain integrity constraint)")


def place_config(config: dict, source: str, options: dict, require_all: bool, say=None) -> tuple[dict, dict]:
    """Profiles the batch-time models (cached) and solves the placement for a run config's chains on its
    placement cores; returns the solution and the models. `options` are the run's scheduler options as the data
    plane resolved them: a scheduler that adapts batches (Bubble) declares their bounds there; under any other,
    an NF takes up to the run's burst a turn."""
    models = batch_models(config, source, say=say)
    nfs = [PlacedNf(name=nf["name"], chain=chain["name"], rate_pps=chain["traffic"]["mean_rate_pps"] or None, weight=nf.get("weight", 1.0),
                    k_cycles=models[nf["name"]]["k_cycles"], c_cycles=models[nf["name"]]["c_cycles"])
           for chain in config["chains"] for nf in chain["nfs"]]
    hz = next(iter(models.values()))["tsc_hz"]  # the cycles the models count
    solution = solve(nfs, config["placement_cores"], hz, options.get("upper_batch", config["burst"]), require_all=require_all)
    return solution, models


def placed(config: dict, solution: dict) -> dict:
    """The config with every NF on its solved core and with its planned rate."""
    result = dict(config, placement="spec")
    result["chains"] = [dict(chain, nfs=[dict(nf, core=solution["placement"][nf["name"]], planned_rate_pps=solution["planned_rate_pps"][nf["name"]])
                                         for nf in chain["nfs"]]) for chain in config["chains"]]
    return result
