"""Which ServiceChain changes the operator makes live: its NFs' arguments only, placed as the resource runs. Any
other difference (a core, a node, an NF, a chain) needs the chains added anew."""

from __future__ import annotations

import copy

from controlplane.kubernetes.cluster_placement import ClusterPlacement
from controlplane.kubernetes.live_arguments import ArgumentsChange, arguments_changes

RUNNING = ClusterPlacement(
    where={"fw": ("node-a", 1), "count": ("node-a", 1)},
    chains_by_node={
        "node-a": [
            {
                "name": "edge.web",
                "nfs": [
                    {"name": "edge.fw", "type": "firewall", "core": 1, "args": {"synthetic_rules": 10}},
                    {"name": "edge.count", "type": "counter", "core": 1},
                ],
            }
        ]
    },
)


def changed(edit) -> ClusterPlacement:
    placed = copy.deepcopy(RUNNING)
    edit(placed)
    return placed


def test_new_arguments_are_changed_live_with_what_runs_kept_to_give_back():
    def more_rules(placed):
        placed.chains_by_node["node-a"][0]["nfs"][0]["args"] = {"synthetic_rules": 20}

    assert arguments_changes(RUNNING, changed(more_rules)) == [
        ArgumentsChange("node-a", "edge.fw", {"synthetic_rules": 20}, {"synthetic_rules": 10})
    ]


def test_arguments_given_to_an_nf_that_had_none_are_a_change_too():
    def args_for_the_counter(placed):
        placed.chains_by_node["node-a"][0]["nfs"][1]["args"] = {"max_flows": 10}

    assert arguments_changes(RUNNING, changed(args_for_the_counter)) == [
        ArgumentsChange("node-a", "edge.count", {"max_flows": 10}, {})
    ]


def test_the_same_placement_changes_nothing():
    assert arguments_changes(RUNNING, copy.deepcopy(RUNNING)) == []


def test_anything_but_arguments_needs_the_chains_added_anew():
    def other_core(placed):
        placed.where["fw"] = ("node-a", 2)
        placed.chains_by_node["node-a"][0]["nfs"][0]["core"] = 2

    def other_type(placed):
        placed.chains_by_node["node-a"][0]["nfs"][1]["type"] = "ttl"

    def another_chain(placed):
        placed.chains_by_node["node-a"].append({"name": "edge.more", "nfs": []})

    def split(placed):
        placed.split = ["web"]

    for edit in (other_core, other_type, another_chain, split):
        assert arguments_changes(RUNNING, changed(edit)) is None, edit.__name__
