"""What the operator does for a ServiceChain, apart from Kubernetes' events: place it on the Tandem nodes' free
cores, add its chains on each node's agent (all of them, or none; a chain across nodes as parts joined by wires, the
wires' ports first), write what it did as the resource's status, remove it from the agents, and place it again when
a node it uses is lost."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from controlplane.errors import SetupError, SpecError
from controlplane.kubernetes.agent_names import agent_prefix, life_of, next_life, runs_chains
from controlplane.kubernetes.chain_cut import wire_prefix
from controlplane.kubernetes.chain_hops import ring_hops, wire_hop
from controlplane.kubernetes.chain_ports import next_port_life
from controlplane.kubernetes.cluster_placement import ClusterPlacement, CostsUnknown, place
from controlplane.kubernetes.live_arguments import ArgumentsChange, arguments_changes
from controlplane.kubernetes.service_chain import ServiceChainSpec
from controlplane.kubernetes.tandem_nodes import TandemNode
from controlplane.launch.control_api import Status
from controlplane.launch.control_client import Control
from controlplane.planning.placement import PlacementError

AGENT_TIMEOUT_S = 5.0  # an agent that does not answer status in this long counts as lost
HOPS_INTERVAL_S = 10.0  # how often a resource's status gets its hops' rates anew
STATUS_FRESH_S = 1.0  # an agent's status serves every resource on its node for this long
CHANGE_TIMEOUT_S = 60.0  # an added chain's NF processes start one by one
RETRY_S = 5.0  # a resource that could not be placed (no capacity, costs unknown, an agent refused) is tried again
LOST_RETRY_S = 2.0  # a node whose agent stopped answering is asked again after this long, then takes chains again


@dataclass
class Held:
    """A placed resource: its placement, and what its agents run (node -> the chains added there; the chains in the
    order they were added, and the wires' ports)."""

    placement: ClusterPlacement
    life: int = 0  # the names its chains took on the agents (agent_names.py)
    added: dict[str, list[str]] = field(default_factory=dict)
    order: list[tuple[str, str]] = field(default_factory=list)
    ports: list[tuple[str, str]] = field(default_factory=list)

    def chain_added(self, node: str, chain: str) -> None:
        self.added.setdefault(node, []).append(chain)
        self.order.append((node, chain))


@dataclass
class Outcome:
    """A reconcile's answer: the status to write, and whether it should be tried again later."""

    status: dict
    retry: bool = False


class Reconciler:
    """Holds the cluster's Tandem nodes (from Node events) and what each ServiceChain holds of them."""

    def __init__(self, token: str | None, time_limit_s: float = 10.0, plan_only: bool = False):
        # plan_only: place and say where, never ask an agent (capacity planning; the operator at scale on fake nodes)
        self.token, self.time_limit_s, self.plan_only = token, time_limit_s, plan_only
        self.nodes: dict[str, TandemNode] = {}
        self.held: dict[str, Held] = {}  # "namespace/name" -> what it holds
        self.lost_at: dict[str, float] = {}  # node -> when its agent was found not answering
        self.retry_at: dict[str, float] = {}  # resource -> when to try placing it again (it could not be, yet)
        self.hops_written_at: dict[str, float] = {}
        # wire -> when its frames received were last read, and how many (a wire hop's rate is between two readings)
        self.wire_readings: dict[str, tuple[float, int]] = {}
        self.lost_since: dict[str, float] = {}  # resource -> when a node it ran on was found lost (not healed yet)
        self.statuses: dict[str, tuple[float, Status | None]] = {}  # node -> when its agent was asked, its answer
        self.lock = threading.Lock()  # kopf runs synchronous handlers on threads

    def agent(self, node: str, timeout: float = CHANGE_TIMEOUT_S) -> Control:
        return Control(tcp=self.nodes[node].control, token=self.token, timeout=timeout)

    def load(self, besides: str) -> dict[str, dict[int, float]]:
        """node -> core -> the share of it every other resource's NFs take."""
        cores: dict[str, dict[int, float]] = {}
        for key, held in self.held.items():
            if key != besides:
                for (node, core), share in held.placement.load().items():
                    cores.setdefault(node, {})[core] = cores.get(node, {}).get(core, 0.0) + share
        return cores

    def apply(self, key: str, resource: str, spec: dict, generation: int | None) -> Outcome:
        """Places the resource and adds its chains on the agents, after removing what it ran before (a changed spec,
        a lost node). On any refusal, what this call added is removed again: the agents run all of it or none. An
        outcome to retry is due again RETRY_S later (due())."""
        with self.lock:
            outcome = self._apply(key, resource, spec, generation)
            if outcome.status["conditions"][0]["reason"] in ("Running", "Planned") and key in self.lost_since:
                outcome.status["healSeconds"] = round(time.monotonic() - self.lost_since.pop(key), 3)
            if outcome.retry:
                self.retry_at[key] = time.monotonic() + RETRY_S
            else:
                self.retry_at.pop(key, None)
            return outcome

    def node_seen(self, name: str, node: TandemNode | None) -> None:
        """A Node event: the node as its annotations now describe it, or None where it is gone or no Tandem node. A
        node that comes (or comes back, or becomes ready) makes every resource that waits to be placed due at once."""
        with self.lock:
            known = self.nodes.pop(name, None)
            if node is None:
                return
            self.nodes[name] = node
            if known is None or (node.ready and not known.ready):
                self.lost_at.pop(name, None)
                for key in self.retry_at:
                    self.retry_at[key] = 0.0

    def due(self, key: str) -> bool:
        """Whether the resource waits to be placed again and its time has come, or a lost node's agent answers again
        (started again by its kubelet, it may take chains at once: its Node's report does not change, so no Node
        event says so)."""
        if key not in self.retry_at:
            return False
        if time.monotonic() >= self.retry_at[key]:
            return True
        with self.lock:
            lost = set(self.lost_at)
            self.usable()  # asks each lost node's agent again, at most every LOST_RETRY_S
            return bool(lost - set(self.lost_at))

    def _apply(self, key: str, resource: str, spec: dict, generation: int | None) -> Outcome:
        began = time.monotonic()
        try:
            # Placed as if the resource ran nowhere (load() leaves it out): what removing it first would give.
            model = ServiceChainSpec.model_validate(spec)
            placement = place(
                resource, model, self.usable(), self.load(key), self.time_limit_s, vnis_in_use=self.vnis(besides=key)
            )
        except CostsUnknown as error:
            self.remove(key)
            return Outcome(_status(generation, "False", "CostsUnknown", str(error)), retry=True)
        except PlacementError as error:
            self.remove(key)
            return Outcome(_status(generation, "False", "NoCapacity", str(error)), retry=True)
        except (SpecError, ValueError) as error:
            self.remove(key)
            return Outcome(_status(generation, "False", "InvalidSpec", _spec_message(error)))
        running = self.held.get(key)
        if running is not None and running.added and key not in self.lost_since:
            placement.named_for_life(resource, running.life)  # compared with what runs, as it is named there
            changes = arguments_changes(running.placement, placement)
            if changes is not None:
                return self._change_arguments(generation, running, placement, changes, began)
        self.remove(key)
        if self.plan_only:
            self.held[key] = Held(placement)
            spans = f"; chains {', '.join(placement.split)} cut into parts joined by wires" if placement.split else ""
            message = (
                f"planned on {', '.join(sorted(placement.nodes()))} in {time.monotonic() - began:.3f} s{spans} "
                "(plan only: no agent was asked)"
            )
            return Outcome(_status(generation, "False", "Planned", message, placement))
        held = Held(placement, life=self._next_life(resource, placement))
        placement.named_for_life(resource, held.life)
        self.held[key] = held
        try:
            # The wires' ports first, then the chains: a cut chain's last part first, so that nothing crosses a wire
            # before the part behind it runs (removal goes the other way: remove()).
            for node, ports in sorted(placement.ports_by_node.items()):
                for port in ports:
                    agent = self.agent(node)
                    _applied(agent.answer_of(agent.add_port(port), CHANGE_TIMEOUT_S), f"node {node}", port["name"])
                    held.ports.append((node, port["name"]))
            additions = [(node, chain) for node, chains in sorted(placement.chains_by_node.items()) for chain in chains]
            additions += [addition for parts in placement.cut_parts for addition in reversed(parts)]
            for node, chain in additions:
                agent = self.agent(node)
                _applied(agent.answer_of(agent.add_chain(chain), CHANGE_TIMEOUT_S), f"node {node}", chain["name"])
                held.chain_added(node, chain["name"])
                self.statuses.pop(node, None)  # a status asked before the addition does not list it
        except SetupError as error:
            self.remove(key)
            return Outcome(_status(generation, "False", "AgentRefused", str(error), placement), retry=True)
        nodes = ", ".join(sorted(placement.nodes()))
        wires = f", {len(placement.wires)} wires between them" if placement.wires else ""
        message = f"on {nodes}{wires}, placed and added in {time.monotonic() - began:.3f} s"
        return Outcome(_status(generation, "True", "Running", message, placement))

    def _change_arguments(
        self,
        generation: int | None,
        running: Held,
        placement: ClusterPlacement,
        changes: list[ArgumentsChange],
        began: float,
    ) -> Outcome:
        """A spec whose change is its NFs' arguments only, placed as it runs: the arguments changed live on the
        agents (all of them, or none: a refused one gives the others their old arguments back)."""
        made: list[ArgumentsChange] = []
        try:
            for change in changes:
                self._set_arguments(change.node, change.nf, change.args)
                made.append(change)
        except SetupError as error:
            for change in reversed(made):
                try:
                    self._set_arguments(change.node, change.nf, change.before)
                except SetupError:
                    continue  # its agent is going: the node will be found lost and the resource placed anew
            return Outcome(_status(generation, "False", "AgentRefused", str(error), running.placement), retry=True)
        running.placement = placement
        named = ", ".join(change.nf for change in changes)
        message = (
            f"arguments of {named} changed live in {time.monotonic() - began:.3f} s (no chain added anew)"
            if changes
            else "the change leaves what the agents run as it was"
        )
        return Outcome(_status(generation, "True", "Running", message, placement))

    def _set_arguments(self, node: str, nf: str, args: dict) -> None:
        agent = self.agent(node)
        reply = agent.answer_of(agent.set_args(nf, args), CHANGE_TIMEOUT_S)
        if reply.state != "applied":
            problems = "; ".join(f"{e.get('path')}: {e.get('message')}" for e in reply.errors)
            raise SetupError(f"node {node} refused the arguments of {nf}: {problems or reply.state}")

    def _next_life(self, resource: str, placement: ClusterPlacement) -> int:
        """The life of the resource's addition on the placement's nodes: after every earlier one whose chain or port
        names their agents keep (removed ones, a half-refused addition's ports); an agent not answering refuses it."""
        statuses = []
        for node in sorted(placement.nodes()):
            try:
                statuses.append(self.agent(node, AGENT_TIMEOUT_S).status())
            except (SetupError, KeyError):
                continue
        chains = [chain.name for status in statuses for chain in status.chains]
        ports = [port["name"] for status in statuses for port in status.ports]
        return max(next_life(resource, chains), next_port_life(resource, ports))

    def vnis(self, besides: str) -> set[int]:
        """The VXLAN networks every other resource's wires use."""
        return {wire.vni for key, held in self.held.items() if key != besides for wire in held.placement.wires}

    def usable(self) -> list[TandemNode]:
        """The nodes that may take chains: a lost one once its agent answers again (asked at most every
        LOST_RETRY_S)."""
        now = time.monotonic()
        for name in list(self.lost_at):
            if name in self.nodes and now - self.lost_at[name] >= LOST_RETRY_S:
                self.statuses.pop(name, None)  # asked anew, not answered from before it was lost
                if self.agent_status(name) is not None:
                    del self.lost_at[name]
                else:
                    self.lost_at[name] = now
        return [node for name, node in self.nodes.items() if name not in self.lost_at]

    def agent_status(self, node: str) -> Status | None:
        """The node's agent's status, or None where it does not answer; asked at most once per STATUS_FRESH_S,
        however many resources run on the node."""
        asked_at, status = self.statuses.get(node, (-STATUS_FRESH_S, None))
        if time.monotonic() - asked_at < STATUS_FRESH_S:
            return status
        try:
            status = self.agent(node, AGENT_TIMEOUT_S).status()
        except (SetupError, KeyError):
            status = None
        self.statuses[node] = (time.monotonic(), status)
        return status

    def mark_lost(self, key: str, nodes: list[str]) -> None:
        """The resource's `nodes` found lost: those whose agents do not answer take no chain until they answer
        again (an agent started again answers, and takes chains at once); the resource's heal time counts from now
        until it runs again."""
        for node in nodes:
            if self.agent_status(node) is None:
                self.lost_at[node] = time.monotonic()
        self.lost_since.setdefault(key, time.monotonic())

    def forget_earlier(self, resource: str, nodes: list[str]) -> None:
        """Removes the chains an earlier operator added for the resource on `nodes` (its status's placement), then
        its wires' ports, so that placing it again starts from nothing; an agent that does not answer has nothing to
        remove."""
        wires = wire_prefix(resource)
        for node in sorted(set(nodes) & self.nodes.keys()):
            try:
                agent = self.agent(node)
                status = agent.status()
                for chain in status.chains:
                    if life_of(resource, chain.name) is not None and not chain.removed:
                        agent.answer_of(agent.remove_chain(chain.name), CHANGE_TIMEOUT_S)
                for port in status.ports:
                    if str(port.get("name", "")).startswith(wires) and not port.get("removed"):
                        agent.answer_of(agent.remove_port(port["name"]), CHANGE_TIMEOUT_S)
            except SetupError:
                continue

    def deleted(self, key: str) -> list[str]:
        """The resource was deleted: its chains removed from the agents (what could not be is returned), nothing
        kept of it."""
        self.lost_since.pop(key, None)
        return self.remove(key)

    def remove(self, key: str) -> list[str]:
        """Removes the resource's chains from the agents that are still there (in the reverse order of their
        addition: a cut chain's first part first, its last packets going on over the wire to the parts still
        running), then its wires' ports; returns what could not be removed."""
        held = self.held.pop(key, None)
        self.retry_at.pop(key, None)
        self.hops_written_at.pop(key, None)
        for wire in held.placement.wires if held else []:
            self.wire_readings.pop(wire.name, None)
        left = []
        steps = [(node, "chain", chain) for node, chain in reversed(held.order if held else [])]
        steps += [(node, "port", port) for node, port in (held.ports if held else [])]
        for node, kind, name in steps:
            if node not in self.nodes:
                continue  # the node is gone, and its agent with it
            try:
                agent = self.agent(node)
                reply = agent.remove_chain(name) if kind == "chain" else agent.remove_port(name)
                agent.answer_of(reply, CHANGE_TIMEOUT_S)
            except SetupError as error:
                left.append(f"{kind} {name} on {node}: {error}")
        return left

    def lost_nodes(self, key: str) -> list[str]:
        """The nodes the resource runs on that are gone, not ready, or whose agent does not answer or no longer
        runs what it was given: an agent started again (a pod's container restarted by its kubelet, in the time
        between two looks) answers, but runs none of it."""
        held = self.held.get(key)
        if held is None:
            return []

        def gone(node: str) -> bool:
            return node not in self.nodes or not self.nodes[node].ready

        def runs_its_part(node: str) -> bool:
            status = self.agent_status(node)
            return status is not None and runs_chains(status, held.added[node])

        if self.plan_only:
            return sorted(node for node in held.placement.nodes() if gone(node))
        return [node for node in sorted(held.added) if gone(node) or not runs_its_part(node)]

    def hops_due(self, key: str) -> bool:
        """Whether the resource's hops are to be written again: every HOPS_INTERVAL_S (a status write per resource
        every few seconds would be most of the API server's load in a cluster of thousands)."""
        if time.monotonic() - self.hops_written_at.get(key, -HOPS_INTERVAL_S) < HOPS_INTERVAL_S:
            return False
        self.hops_written_at[key] = time.monotonic()
        return True

    def hops(self, key: str, resource: str) -> list[dict]:
        """Each hop of the resource's chains as their agents count it: the rings into its NFs on each node, and the
        wires between the parts of a cut chain (chain_hops.py)."""
        held = self.held.get(key)
        if held is None:
            return []
        prefix = agent_prefix(resource, held.life)
        chains_by_node = held.placement.every_chain_by_node()
        statuses = {
            node: self.agent_status(node) if node in held.added and node in self.nodes else None
            for node in chains_by_node
        }
        hops = []
        for node, chains in sorted(chains_by_node.items()):
            if statuses[node] is not None:
                hops += [hop for chain in chains for hop in ring_hops(node, chain, statuses[node], prefix)]
        now = time.monotonic()
        for wire in held.placement.wires:
            if hop := wire_hop(wire, statuses, self.wire_readings, now):
                hops.append(hop)
        return hops


def _applied(reply, where: str, name: str) -> None:
    """Raises SetupError naming `where` and the chain or port, unless the agent applied the change."""
    if reply.state != "applied":
        problems = "; ".join(f"{e.get('path')}: {e.get('message')}" for e in reply.errors)
        raise SetupError(f"{where} refused {name}: {problems or reply.state}")


def _spec_message(error: Exception) -> str:
    if isinstance(error, SpecError):
        return "; ".join(f"{where or 'spec'}: {message}" for where, message in error.problems)
    return str(error)


def _status(
    generation: int | None, ready: str, reason: str, message: str, placement: ClusterPlacement | None = None
) -> dict:
    now = datetime.fromtimestamp(time.time(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = {"type": "Ready", "status": ready, "reason": reason, "message": message[:32768]}
    condition |= {"lastTransitionTime": now}
    if generation is not None:
        condition["observedGeneration"] = generation
    status: dict = {"conditions": [condition], "observedGeneration": generation}
    shares = placement.shares if placement else {}
    status["placement"] = [
        # The share of its core the NF takes at its planned rate: cores are shared between ServiceChains.
        {"nf": nf, "node": node, "core": core, "coreShare": min(round(shares.get(nf, 0.0), 6), 1.0)}
        for nf, (node, core) in sorted((placement.where if placement else {}).items())
    ]
    return status
