"""The names a ServiceChain's chains and NFs take on an agent, life after life: the first addition's as the resource
writes them behind its name, each later one's after every name the agents keep, never another resource's."""

from __future__ import annotations

from controlplane.kubernetes.agent_names import agent_name, bare_name, life_of, next_life


def test_the_first_life_is_the_resources_name_and_later_ones_carry_their_number():
    assert agent_name("edge", "web") == "edge.web"
    assert agent_name("edge", "web.0", 2) == "edge_2.web.0"
    assert [life_of("edge", name) for name in ("edge.web", "edge_2.web.0", "edge_12.fw")] == [0, 2, 12]
    assert bare_name("edge", "edge_2.web.0") == "web.0" and bare_name("edge", "edge.fw") == "fw"


def test_another_resources_names_are_none_of_its_lives():
    # "edge-b" is a valid name of another resource; a Kubernetes name has no '_'.
    assert [life_of("edge", name) for name in ("edge-b.web", "edgeb_1.web", "own", "edge_x.web")] == [None] * 4
    assert bare_name("edge", "edge-b.web") == "edge-b.web"


def test_an_addition_takes_the_life_after_every_name_the_agents_keep():
    assert next_life("wide", []) == 0
    assert next_life("wide", ["own", "small.web"]) == 0
    assert next_life("wide", ["own", "wide.web.0"]) == 1  # removed or not: its name stays taken
    assert next_life("wide", ["wide.web.1", "wide_3.web.1", "wide_1.web.0"]) == 4
