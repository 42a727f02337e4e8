"""Where a ServiceChain's NFs run across the cluster: its chains as a run config, each NF's costs as every Tandem
node measured them, and Tandem's placement model over the nodes' free cores (fewest packets between nodes); then
each node's share as chains its agent can add, a chain across nodes cut into parts joined by wires."""

from __future__ import annotations

import copy
import functools
import statistics
from dataclasses import dataclass, field

from controlplane.errors import SpecError
from controlplane.kubernetes.agent_names import agent_name, bare_name
from controlplane.kubernetes.chain_cut import Wire, cut, wire_port
from controlplane.kubernetes.chain_ports import (
    agent_port,
    agent_port_name,
    pinned_nfs,
    port_of,
    rename_ends,
    with_agent_ports,
)
from controlplane.kubernetes.service_chain import ChainPort, ServiceChainSpec
from controlplane.kubernetes.tandem_nodes import TandemNode
from controlplane.planning import graph_cuts, profile
from controlplane.planning.placement import PlacedNf, PlacementError, k_per_packet, solve
from controlplane.planning.rate_shares import upper_bound_shares
from controlplane.sfc.spec_or_request import compose_request
from controlplane.spec.chain_graph import Edge
from controlplane.spec.deployment import run_config
from controlplane.spec.loading import spec_from_document

CANDIDATE_NODES = 8
MIN_ROOM = 0.02  # a core in use with less of it left is not offered


class CostsUnknown(PlacementError):
    """No Tandem node measured an NF's costs: nothing says how many cores it needs."""


@dataclass
class ClusterPlacement:
    where: dict[str, tuple[str, int]]  # NF (as the resource names it) -> (node, core)
    chains_by_node: dict[str, list[dict]]  # per node, the chains (a spec's `chains` entries) its agent adds
    split: list[str] = field(default_factory=list)  # chains whose NFs sit on more than one node
    # Each split chain's parts, in chain order: (node, the part as its agent adds it); and the wires between them,
    # as each node's agent adds their ports (spec `ports` entries).
    cut_parts: list[list[tuple[str, dict]]] = field(default_factory=list)
    wires: list[Wire] = field(default_factory=list)
    ports_by_node: dict[str, list[dict]] = field(default_factory=dict)
    edges_between_nodes: list[tuple[str, str]] = field(default_factory=list)
    solution: dict = field(default_factory=dict)
    shares: dict[str, float] = field(default_factory=dict)  # NF -> the share of its core it takes at its rate
    # The resource's ports its chains use, and the name each has on its node's agent (in ports_by_node too).
    node_ports: list[ChainPort] = field(default_factory=list)
    port_names: dict[str, str] = field(default_factory=dict)

    def load(self) -> dict[tuple[str, int], float]:
        """(node, core) -> the share of it this resource's NFs take."""
        cores: dict[tuple[str, int], float] = {}
        for nf, where in self.where.items():
            cores[where] = cores.get(where, 0.0) + self.shares.get(nf, 0.0)
        return cores

    def nodes(self) -> set[str]:
        return {node for node, _ in self.where.values()}

    def named_for_life(self, resource: str, life: int) -> None:
        """Renames its chains and NFs on the agents as the resource's `life`-th addition there names them
        (agent_names.py)."""
        for entries in self.every_chain_by_node().values():
            for entry in entries:
                _rename(entry, lambda name: agent_name(resource, bare_name(resource, name), life))
        self.name_ports(resource, life)

    def name_ports(self, resource: str, life: int) -> None:
        """Names its ports on their agents as the resource's `life`-th addition there names them, and its chains'
        ends after them."""
        names = {port.name: agent_port_name(resource, port.name, life) for port in self.node_ports}
        renamed = {self.port_names[port]: name for port, name in names.items() if port in self.port_names}
        for node, ports in self.ports_by_node.items():
            self.ports_by_node[node] = [port for port in ports if port["name"] not in renamed]
        for port in reversed(self.node_ports):
            self.ports_by_node.setdefault(port.node, []).insert(0, agent_port(names[port.name], port))
        for entries in self.every_chain_by_node().values():
            for entry in entries:
                rename_ends(entry, renamed)
        self.port_names = names

    def every_chain_by_node(self) -> dict[str, list[dict]]:
        """Per node, the chains its agent runs for the resource: whole chains and cut chains' parts."""
        chains = {node: list(entries) for node, entries in self.chains_by_node.items()}
        for parts in self.cut_parts:
            for node, part in parts:
                chains.setdefault(node, []).append(part)
        return chains


def chains_of(resource: str, spec: ServiceChainSpec) -> list[dict]:
    """The resource's chains as a spec's `chains` entries (an SFC request composed), each with its own traffic
    (the resource's where the chain gives none), as written in the resource: NF names not yet prefixed."""
    defaults = spec.traffic.model_dump(exclude_none=True, by_alias=True)
    if spec.sfc is not None:
        document = {"name": resource, "sfc": spec.sfc.model_dump(exclude_none=True, by_alias=True)}
        document |= {"placement": "fewest_cores", "traffic": defaults}
        composed, _ = compose_request(f"ServiceChain {resource}", document)
        chains = [chain.model_dump(exclude_none=True, by_alias=True) for chain in composed.chains]
    else:
        chains = [chain.model_dump(exclude_none=True, by_alias=True) for chain in spec.chains]
    for chain in chains:
        chain["traffic"] = defaults | chain.get("traffic", {})
    return chains


def run_config_of(resource: str, chains: list[dict], spec: ServiceChainSpec) -> dict:
    """The run config of the chains (as `./tandem place` reads a spec): rates in packets per second, NF args checked."""
    # A chain's ports are its agents' to open: the model takes its packets at the rate it gives, from anywhere.
    modelled = [{key: value for key, value in chain.items() if key not in ("from", "to")} for chain in chains]
    document = {"name": resource, "chains": modelled, "placement": spec.placement, "placement_cores": [1]}
    if spec.scheduler is not None:
        document["scheduler"] = spec.scheduler.model_dump()
    try:
        return run_config(spec_from_document(document, f"ServiceChain {resource}"))
    except ValueError as error:  # a chain's own rule that the resource's schema cannot express
        raise SpecError(f"ServiceChain {resource}", [("spec.chains", str(error))]) from None


def place(
    resource: str,
    spec: ServiceChainSpec,
    nodes: list[TandemNode],
    load: dict[str, dict[int, float]] | None = None,
    time_limit_s: float = 10.0,
    vnis_in_use: set[int] | None = None,
) -> ClusterPlacement:
    """Places the resource's NFs on the ready nodes' cores: beside other resources' NFs where a core has room
    (`load`: node -> core -> the share of it they take), or on new cores; a chain across nodes is cut into parts
    joined by wires, their VNIs not in `vnis_in_use` (which they join). Raises CostsUnknown (no node measured an
    NF) or PlacementError (the cores do not carry the chains at their rates, naming the constraint; a node whose
    agent gives no address a wire can run to). A graph's NFs between two edges a wire may carry stay on one node."""
    load = load or {}
    chains = chains_of(resource, spec)
    config = run_config_of(resource, chains, spec)
    usable = [node for node in nodes if node.ready]
    if not usable:
        raise PlacementError("no ready Tandem node (a node's agent reports itself on its Node when it starts)")
    pins = pinned_nfs(chains, spec.ports)
    for node, port in sorted(set(pins.values())):
        if all(candidate.name != node for candidate in usable):
            raise PlacementError(
                f"port {port} is on node {node}, which is no ready Tandem node (lost, or its agent has not reported)"
            )
    pinned = {nf: node for nf, (node, _) in pins.items()}
    nfs, edges = _placed_nfs(config, usable)
    together = _graph_blocks(config, chains)
    # A node's new cores are alike (its costs, whole cores), and so are, nearly, its cores in use with the most room:
    # N NFs never use more than N of either, so no more are offered; and only on the CANDIDATE_NODES nodes with room
    # where the chains cost the least, so each program stays small however large the cluster. The answer is the
    # best over what was offered: the resource on the one node where it takes the fewest new cores (or, for
    # throughput, carries the most), and across those nodes only where no one node carries it (a chain across
    # nodes waits for the wire hops between them).
    most = len(nfs)
    offers = {node.name: _offered_cores(node, load.get(node.name, {}), most) for node in usable}
    upper = config["burst"]
    by_cost = sorted(
        (node for node in usable if offers[node.name]), key=lambda node: (_seconds(nfs, node, upper), node.name)
    )
    if not by_cost:
        raise PlacementError("no core with room on a ready Tandem node (other ServiceChains' NFs fill every core)")
    solve_on = functools.partial(
        _solve_on, nfs, edges, together, offers, usable, upper, spec.placement, time_limit_s, pinned
    )
    # Where ports pin NFs, on their nodes (and on others only where they are on several).
    ends = set(pinned.values())
    singles = [node for node in by_cost if not ends or ends == {node.name}]
    found = []
    for node in [node for node in singles if _may_carry(nfs, node, offers[node.name], upper)][:CANDIDATE_NODES]:
        try:
            found.append(solve_on([node]))
        except PlacementError:
            continue
    if found:
        better = max if spec.placement == "throughput" else min
        where, solution = better(found, key=lambda answer: answer[1]["objective"])  # the first of equals: cheapest
    else:
        across = [node for node in usable if node.name in ends]
        across += [node for node in by_cost if node.name not in ends][: max(CANDIDATE_NODES - len(across), 0)]
        where, solution = solve_on(across)
    placement = _on_agents(
        resource, chains, where, solution, {node.name: node for node in usable}, vnis_in_use, spec.ports
    )
    hz = {node.name: node.tsc_hz for node in usable}
    for nf in nfs:
        node, _ = where[nf.name]
        placement.shares[nf.name] = solution["planned_rate_pps"][nf.name] * k_per_packet(nf, upper, node) / hz[node]
    return placement


def _solve_on(nfs, edges, together, offers, usable, upper, objective, time_limit_s, pinned, nodes: list[TandemNode]):
    """The placement over `nodes`' offered cores: ({NF: (node, core)}, the solution); PlacementError if they do not
    carry the chains."""
    node_of, room = {}, {}
    core_ids: dict[tuple[str, int], int] = {}  # placement numbers each offered core once, cores in use first
    for node in nodes:
        for core, left in offers[node.name]:
            number = core_ids[(node.name, core)] = len(core_ids)
            node_of[number] = node.name
            if left < 1.0:
                room[number] = left
    solution = solve(
        nfs,
        list(node_of),
        usable[0].tsc_hz,
        upper,
        require_all=True,
        objective=objective,
        edges=edges,
        time_limit_s=time_limit_s,
        node_of=node_of,
        node_hz={node.name: node.tsc_hz for node in usable},
        room=room,
        together=together,
        pinned=pinned,
    )
    by_id = {number: key for key, number in core_ids.items()}
    return {nf: by_id[core] for nf, core in solution["placement"].items()}, solution


def _offered_cores(node: TandemNode, load: dict[int, float], most: int) -> list[tuple[int, float]]:
    """(core, the share of it left): up to `most` of the node's cores in use with the most room, then up to `most`
    of its new cores."""
    in_use = sorted(
        ((core, 1.0 - load[core]) for core in node.cores if core in load and 1.0 - load[core] >= MIN_ROOM),
        key=lambda offer: -offer[1],
    )
    new = [(core, 1.0) for core in node.cores if core not in load]
    return in_use[:most] + new[:most]


def _placed_nfs(config: dict, nodes: list[TandemNode]) -> tuple[list[PlacedNf], list[tuple[str, str, float]]]:
    """The chains' NFs as the placement model takes them, each with its costs on every node, and their edges."""
    nfs, edges = [], []
    for chain in config["chains"]:
        shares = upper_bound_shares(chain)
        edges += shares["edges"]
        for nf in chain["nfs"]:
            k, c, node_cycles = _costs(nf, nodes)
            nfs.append(
                PlacedNf(
                    name=nf["name"],
                    chain=chain["name"],
                    rate_pps=chain["traffic"]["mean_rate_pps"] or None,
                    weight=nf.get("weight", 1.0),
                    k_cycles=k,
                    c_cycles=c,
                    share=shares["nfs"][nf["name"]],
                    node_cycles=node_cycles,
                )
            )
    return nfs, edges


def _graph_blocks(config: dict, chains: list[dict]) -> list[list[str]]:
    """The NFs of each graph that go on one node: its blocks between the edges a wire may carry (graph_cuts.py),
    a scaled NF's instances in its block (their edges part nothing)."""
    graphs = {chain["name"] for chain in chains if chain.get("graph") is not None}
    found = []
    for chain in config["chains"]:
        if chain["name"] in graphs:
            edges = [
                Edge(edge["from"], edge["to"], edge.get("label"), chain["name"]) for edge in chain.get("edges", [])
            ]
            found += graph_cuts.blocks([nf["name"] for nf in chain["nfs"]], edges)
    return found


def _may_carry(nfs: list[PlacedNf], node: TandemNode, offered: list[tuple[int, float]], upper: int) -> bool:
    """Whether the node's offered cores may carry the NFs: their room adds up to the NFs' work, and the largest NF
    fits the roomiest core (necessary, not sufficient: the program decides)."""
    rooms = [left for _, left in offered]
    need = [_seconds([nf], node, upper) for nf in nfs]
    return bool(rooms) and sum(rooms) >= sum(need) and max(rooms) >= max(need, default=0.0)


def _seconds(nfs: list[PlacedNf], node: TandemNode, upper: int) -> float:
    """Seconds of a core a second that the NFs take on `node` at their rates, in batches of `upper` packets."""
    return sum((nf.rate_pps or 0) * nf.share * k_per_packet(nf, upper, node.name) / node.tsc_hz for nf in nfs)


def _costs(nf: dict, nodes: list[TandemNode]) -> tuple[float, float, dict[str, tuple[float, float]]]:
    """An NF's (k, c) on the reference node (the first), and on each node: as the node measured it, or, where it
    did not, the median of those that did (nodes of one kind of machine count alike)."""
    key = profile.cost_key(nf)
    measured = {node.name: node.costs[key] for node in nodes if key in node.costs}
    if not measured:
        raise CostsUnknown(
            f"no Tandem node measured the costs of NF {nf['name']} (type {nf['type']} with its args): a node's agent "
            "reports what it measured (tandem.dev/costs), so nothing says how many cores it needs"
        )
    fallback = (
        statistics.median(k for k, _ in measured.values()),
        statistics.median(c for _, c in measured.values()),
    )
    per_node = {node.name: measured.get(node.name, fallback) for node in nodes}
    k, c = per_node[nodes[0].name]
    return k, c, per_node


def _on_agents(
    resource: str,
    chains: list[dict],
    where: dict,
    solution: dict,
    nodes: dict[str, TandemNode],
    vnis_in_use: set[int] | None,
    ports: list[ChainPort],
) -> ClusterPlacement:
    placement = ClusterPlacement(where=where, chains_by_node={}, solution=solution)
    placement.edges_between_nodes = [tuple(edge) for edge in solution.get("edges_between_nodes", [])]
    used = set() if vnis_in_use is None else vnis_in_use
    named = {port_of(chain.get(end)) for chain in chains for end in ("from", "to")}
    placement.node_ports = [port for port in ports if port.name in named]
    placement.name_ports(resource, 0)
    for chain in [with_agent_ports(chain, placement.port_names) for chain in chains]:
        names = [nf["name"] for nf in _nfs(chain)]
        on = {where[name][0] for name in names}
        if len(on) == 1:
            placement.chains_by_node.setdefault(on.pop(), []).append(_for_agent(resource, chain, where))
            continue
        placement.split.append(chain["name"])
        parts = cut(resource, chain, where, used)
        placement.cut_parts.append([(node, _for_agent(resource, part, where)) for node, part in parts.parts])
        placement.wires += parts.wires
        for wire in parts.wires:
            for node in (wire.sender, wire.receiver):
                placement.ports_by_node.setdefault(node, []).append(wire_port(wire, node, nodes))
    return placement


def _nfs(chain: dict) -> list[dict]:
    return chain["nfs"] if chain.get("nfs") is not None else chain["graph"]["nodes"]


def _for_agent(resource: str, chain: dict, where: dict) -> dict:
    """The chain as its node's agent adds it: chain and NF names prefixed with the resource's, each NF on its core."""
    entry = copy.deepcopy(chain)
    for nf in _nfs(entry):
        nf["core"] = where[nf["name"]][1]
    _rename(entry, lambda name: agent_name(resource, name))
    return entry


def _rename(entry: dict, renamed) -> None:
    """The chain's name, its NFs' and its edges' ends, each `renamed(name)`."""
    entry["name"] = renamed(entry["name"])
    for nf in _nfs(entry):
        nf["name"] = renamed(nf["name"])
    for edge in (entry.get("graph") or {}).get("edges", []):
        edge["from"], edge["to"] = renamed(edge["from"]), renamed(edge["to"])
