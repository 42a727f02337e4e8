"""Which of a ServiceChain's nodes the operator counts as lost (controlplane/kubernetes/reconciler.py), from what the
agents answer: gone, not Ready, silent, or answering without the chains it was given (its pod's container started
again by its kubelet between two looks: it runs none of them); and a status asked before an addition is not taken
for the agent's answer after it."""

from __future__ import annotations

import time

from controlplane.kubernetes.cluster_placement import ClusterPlacement
from controlplane.kubernetes.reconciler import Held, Reconciler
from controlplane.kubernetes.tandem_nodes import TandemNode
from controlplane.launch.control_api import ChainStatus, Status


def chain(name: str, removed: bool = False) -> ChainStatus:
    return ChainStatus(name=name, generated=10, delivered=10, entry_backpressure=0, removed=removed)


def status(*chains: ChainStatus, added: tuple[str, ...] = ()) -> Status:
    """An agent's status: its data plane's last report's chains, and `added`, chains it added (its changes)."""
    changes = [{"op": "add_chain", "chain": name, "state": "applied"} for name in added]
    return Status(name="node", scheduler="coop", phase="serving", t_s=1.0, chains=list(chains), nfs=[], changes=changes)


class Answering:
    """An agent's control API as the reconciler asks it: its status."""

    def __init__(self, answer: Status) -> None:
        self.answer = answer

    def status(self) -> Status:
        return self.answer


def reconciler_holding(added: dict[str, list[str]], answers: dict[str, Status | None]) -> Reconciler:
    """A reconciler that placed `edge` on the nodes of `added` and last asked each node's agent `answers` (now)."""
    reconciler = Reconciler(token="t")
    for node in added:
        reconciler.nodes[node] = TandemNode(node, ("198.18.40.1", 7100), (1,), 2e9)
    held = Held(ClusterPlacement(where={}, chains_by_node={}))
    for node, chains in added.items():
        for name in chains:
            held.chain_added(node, name)
    reconciler.held["default/edge"] = held
    reconciler.statuses = {node: (time.monotonic(), answer) for node, answer in answers.items()}
    return reconciler


def test_an_agent_that_runs_what_it_was_given_is_not_lost():
    answers = {"node-a": status(chain("edge.web"), chain("own")), "node-b": status(chain("edge_1.web"))}
    reconciler = reconciler_holding({"node-a": ["edge.web"], "node-b": ["edge_1.web"]}, answers)
    assert reconciler.lost_nodes("default/edge") == []


def test_a_chain_just_added_is_run_before_the_data_plane_reports_it():
    # The addition was answered (it is among the agent's changes); its data plane's next report lists it.
    answers = {"node-a": status(chain("own"), added=("edge.web",))}
    reconciler = reconciler_holding({"node-a": ["edge.web"]}, answers)
    assert reconciler.lost_nodes("default/edge") == []


def test_an_agent_started_again_answers_without_its_chains_and_is_lost():
    # node-b's agent answers (its kubelet started it again) but runs only its own chain: what it was given is gone.
    answers = {"node-a": status(chain("edge.web")), "node-b": status(chain("own"))}
    reconciler = reconciler_holding({"node-a": ["edge.web"], "node-b": ["edge_1.web"]}, answers)
    assert reconciler.lost_nodes("default/edge") == ["node-b"]
    # It answers: it may take the chain again at once (a silent one waits until it answers again).
    reconciler.mark_lost("default/edge", ["node-b"])
    assert [node.name for node in reconciler.usable()] == ["node-a", "node-b"]


def test_a_silent_agent_a_removed_chain_and_a_node_not_ready_are_lost():
    answers = {"node-a": None, "node-b": status(chain("edge_1.web", removed=True)), "node-c": status(chain("edge_2"))}
    reconciler = reconciler_holding({"node-a": ["edge.web"], "node-b": ["edge_1.web"], "node-c": ["edge_2"]}, answers)
    reconciler.nodes["node-c"] = TandemNode("node-c", ("198.18.40.3", 7100), (1,), 2e9, ready=False)
    assert reconciler.lost_nodes("default/edge") == ["node-a", "node-b", "node-c"]
    reconciler.mark_lost("default/edge", ["node-a"])
    assert "node-a" not in [node.name for node in reconciler.usable()]


def test_a_resource_waiting_for_a_lost_node_is_due_once_its_agent_answers_again():
    reconciler = reconciler_holding({"node-a": ["edge.web"]}, {"node-a": None})
    reconciler.mark_lost("default/edge", ["node-a"])
    reconciler.retry_at["default/edge"] = time.monotonic() + 60  # NoCapacity: tried again in a minute
    assert not reconciler.due("default/edge")
    # Its agent answers again (asked once LOST_RETRY_S passed): the resource is due at once.
    reconciler.lost_at["node-a"] -= 10
    reconciler.agent = lambda node, timeout=None: Answering(status(chain("own")))
    assert reconciler.due("default/edge")
    assert [node.name for node in reconciler.usable()] == ["node-a"]
