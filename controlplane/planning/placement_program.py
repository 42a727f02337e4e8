"""The placement's mixed-integer linear program, built for HiGHS, started from a known placement and stopped at a
time limit: the variables and constraints that controlplane/planning/placement.py documents.

HiGHS checks a start (`setSolution`) and keeps it as its incumbent when it is feasible, so a program that runs
out of time still answers with a placement at least as good as the start, and reports the gap it proved."""

from __future__ import annotations

from dataclasses import dataclass, field

from controlplane.planning.first_fit import FirstFit

# The program works in Mpps and in cores (fractions of hz): numbers near 1 keep the solver well conditioned.
_SCALE = 1e6
# Fewest cores' tie-break, in cores: the traffic crossing between cores, and between nodes where cores sit on
# several, each weighted by its share of all edge traffic. The weights sum to 1/2 < one core, so the core count
# always comes first; an edge between nodes crosses cores too, so a packet over the wire costs ten times one
# between two cores of a node.
CORE_CROSSING_WEIGHT = 0.05
NODE_CROSSING_WEIGHT = 0.45


@dataclass
class ProgramResult:
    status: str  # "optimal", "time limit" (with a placement), "infeasible", or why there is no placement
    core_of: dict[int, int] = field(default_factory=dict)  # NF index -> core
    rate_pps: dict[str, float] = field(default_factory=dict)  # chain -> solved rate
    accepted: list[str] = field(default_factory=list)
    crossing: list[tuple[str, str]] = field(default_factory=list)  # edges whose ends the program parted
    objective: float = 0.0  # throughput: weighted pps; fewest_cores: cores + the crossing term (below 1/2)
    dual_bound: float | None = None  # in the objective's units; None where HiGHS proved none


def solve_program(
    highspy,
    nfs: list,
    cores: list[int],
    seconds,
    require_all: bool,
    serve_offered: bool,
    objective: str,
    edges: list[tuple[str, str, float]],
    start: FirstFit | None,
    time_limit_s: float,
    node_of: dict[int, str] | None = None,
    room: dict[int, float] | None = None,
    together: list[list[int]] | None = None,
    allowed: dict[int, set[int]] | None = None,
) -> ProgramResult:
    """`start`: a feasible placement HiGHS starts from (first_fit.FirstFit: core_of {NF index: core}, rate_pps
    {chain: pps} of the accepted chains); None to start cold. `seconds(nf, core)`: that core's seconds a packet of
    the NF takes. `node_of`: each core's node, where the cores sit on several. `room`: the share left of cores that
    already run other NFs (using one adds no core to fewest cores' count). `together`: groups of NF indexes that
    go on one node. `allowed`: NF index -> the only cores it may take (an NF pinned to a node)."""
    room = room or {}
    h = highspy.Highs()
    h.silent()
    h.setOptionValue("time_limit", max(time_limit_s, 0.01))
    chains = list(dict.fromkeys(nf.chain for nf in nfs))
    # No chain is faster than its cheapest NF alone on a core: the bound of a chain without a rate, in Mpps.
    unbounded = 1 / (_SCALE * min((seconds(nf, core) for nf in nfs for core in cores), default=1e-9))
    offered = {nf.chain: (nf.rate_pps / _SCALE if nf.rate_pps else None) for nf in nfs}
    y = {c: h.addBinary() for c in chains}
    t = {c: h.addVariable(lb=0, ub=offered[c] if offered[c] is not None else unbounded) for c in chains}
    x, z = {}, {}
    for i, nf in enumerate(nfs):
        for core in cores:
            x[i, core] = h.addBinary()
            z[i, core] = h.addVariable(lb=0)
            h.addConstr(z[i, core] <= (offered[nf.chain] or unbounded) * nf.share * x[i, core])
            if allowed and i in allowed and core not in allowed[i]:
                h.addConstr(x[i, core] == 0)
        h.addConstr(sum(x[i, core] for core in cores) == y[nf.chain])  # integrity: all NFs of a chain, or none
        h.addConstr(sum(z[i, core] for core in cores) == nf.share * t[nf.chain])  # its share of the chain's rate
    for c in chains:
        h.addConstr(t[c] <= (offered[c] or unbounded) * y[c])
        if serve_offered and offered[c] is not None:
            h.addConstr(t[c] >= offered[c] * y[c])
        if require_all:
            h.addConstr(y[c] == 1)
    nodes = nodes_of(cores, node_of or {})
    for members in nodes.values() if len(nodes) > 1 else []:
        for first, *others in together or []:  # each NF of a group on a node exactly where its first is
            for other in others:
                h.addConstr(sum(x[first, core] for core in members) == sum(x[other, core] for core in members))
    for core in cores:
        cost = [(seconds(nf, core) * _SCALE, z[i, core]) for i, nf in enumerate(nfs)]
        h.addConstr(sum(coefficient * variable for coefficient, variable in cost) <= room.get(core, 1.0))
    used, crossing, apart = {}, {}, {}
    if objective == "throughput":
        h.setObjective(sum(nf.weight * nf.share * t[nf.chain] for nf in nfs) if nfs else 0, highspy.ObjSense.kMaximize)
    else:
        used, crossing, apart = _fewest_cores_objective(h, highspy, nfs, cores, x, edges, offered, node_of or {}, room)
    if start is not None:
        h.setSolution(_start_vector(h, highspy, nfs, start, y, t, x, z, used, crossing, apart, node_of or {}))
    h.run()

    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    if status == "Infeasible":
        return ProgramResult("infeasible")
    if info.primal_solution_status != 2:  # no feasible point: cold start out of time, or HiGHS failed
        return ProgramResult("no placement found within the time limit" if status == "Time limit reached" else status)
    scale = _SCALE if objective == "throughput" else 1
    result = ProgramResult(
        "optimal" if status == "Optimal" else ("time limit" if status == "Time limit reached" else status),
        rate_pps={c: h.val(t[c]) * _SCALE for c in chains},
        accepted=[c for c in chains if h.val(y[c]) > 0.5],
        objective=info.objective_function_value * scale,
        dual_bound=info.mip_dual_bound * scale if abs(info.mip_dual_bound) < 1e30 else None,
    )
    for i, _ in enumerate(nfs):
        for core in cores:
            if h.val(x[i, core]) > 0.5:
                result.core_of[i] = core
    result.crossing = [edge for edge in crossing if h.val(crossing[edge]) > 0.5]
    return result


def _fewest_cores_objective(h, highspy, nfs, cores, x, edges, offered, node_of: dict[int, str], room):
    """μNF-MC's objective: new cores used first (a core in `room` runs other NFs already), then the traffic between
    nodes and between cores. Returns the new cores' used variables and the edges' crossing variables (between
    cores, between nodes)."""
    index = {nf.name: i for i, nf in enumerate(nfs)}
    chain_of = {nf.name: nf.chain for nf in nfs}
    fresh = [core for core in cores if core not in room]
    used = {core: h.addBinary() for core in fresh}
    for i, _ in enumerate(nfs):
        for core in fresh:
            h.addConstr(x[i, core] <= used[core])
    nodes = nodes_of(cores, node_of)
    for members in nodes_of(fresh, node_of).values():
        for before, after in zip(members, members[1:], strict=False):
            h.addConstr(used[before] >= used[after])  # a node's cores are alike: use them in order
    traffic = {(a, b): share * offered[chain_of[a]] for a, b, share in edges if a in index and b in index}
    total = sum(traffic.values())
    crossing, apart = {}, {}
    for a, b in traffic:
        crossing[a, b] = h.addVariable(lb=0, ub=1)
        for core in cores:
            h.addConstr(crossing[a, b] >= x[index[a], core] - x[index[b], core])
        if len(nodes) > 1:
            apart[a, b] = h.addVariable(lb=0, ub=1)
            for members in nodes.values():
                on_node = [(x[index[a], core], x[index[b], core]) for core in members]
                h.addConstr(apart[a, b] >= sum(xa for xa, _ in on_node) - sum(xb for _, xb in on_node))
    core_weight = CORE_CROSSING_WEIGHT if apart else CORE_CROSSING_WEIGHT + NODE_CROSSING_WEIGHT
    terms = [(core_weight * traffic[e] / total) * crossing[e] for e in crossing if total > 0]
    terms += [(NODE_CROSSING_WEIGHT * traffic[e] / total) * apart[e] for e in apart if total > 0]
    if used or terms:  # else no new core and no edge: every placement that fits is as good (HiGHS takes no constant)
        h.setObjective(sum(used.values()) + sum(terms), highspy.ObjSense.kMinimize)
    return used, crossing, apart


def nodes_of(cores: list[int], node_of: dict[int, str]) -> dict[str, list[int]]:
    """Each node's cores, in the order given; one node ("") where no core has one."""
    nodes: dict[str, list[int]] = {}
    for core in cores:
        nodes.setdefault(node_of.get(core, ""), []).append(core)
    return nodes


def crossing_cost(core_of: dict[int, int], nfs, edges, cores, node_of: dict[int, str]) -> tuple[float, list, list]:
    """The tie-break's value for a placement as the program counts it, and the edges it parts (between cores,
    between nodes)."""
    index = {nf.name: i for i, nf in enumerate(nfs)}
    traffic = {(a, b): share * (nfs[index[a]].rate_pps or 0) for a, b, share in edges if a in index and b in index}
    total = sum(traffic.values())
    several = len(nodes_of(cores, node_of)) > 1
    between_cores = [e for e in traffic if core_of.get(index[e[0]]) != core_of.get(index[e[1]])]
    between_nodes = [
        e for e in between_cores if node_of.get(core_of.get(index[e[0]])) != node_of.get(core_of.get(index[e[1]]))
    ]
    if not total:
        return 0.0, between_cores, between_nodes
    core_weight = CORE_CROSSING_WEIGHT if several else CORE_CROSSING_WEIGHT + NODE_CROSSING_WEIGHT
    cost = core_weight * sum(traffic[e] for e in between_cores) / total
    if several:
        cost += NODE_CROSSING_WEIGHT * sum(traffic[e] for e in between_nodes) / total
    return cost, between_cores, between_nodes


def _start_vector(h, highspy, nfs, start, y, t, x, z, used, crossing, apart, node_of):
    """Every column's value in the start placement, as HiGHS's solution vector."""
    values = [0.0] * h.getNumCol()
    rates = start.rate_pps
    for c in y:
        values[y[c].index] = 1.0 if c in rates else 0.0
        values[t[c].index] = rates.get(c, 0.0) / _SCALE
    for i, nf in enumerate(nfs):
        core = start.core_of.get(i)
        if core is None:
            continue
        values[x[i, core].index] = 1.0
        values[z[i, core].index] = rates[nf.chain] * nf.share / _SCALE
        if core in used:
            values[used[core].index] = 1.0
    names = {nf.name: i for i, nf in enumerate(nfs)}
    where = start.core_of
    for (a, b), variable in crossing.items():
        values[variable.index] = float(where.get(names[a]) != where.get(names[b]))
    for (a, b), variable in apart.items():
        values[variable.index] = float(node_of.get(where.get(names[a])) != node_of.get(where.get(names[b])))
    solution = highspy.HighsSolution()
    solution.col_value = values
    return solution
