"""The composer's rules one by one, on synthetic μNF descriptors: what it merges, what it must not merge, what it
runs in parallel; and the errors of VNF templates and SFC requests (exit 2 naming the file and field)."""

from __future__ import annotations

import pytest

from conftest import REPO, tandem
from controlplane.errors import SpecError
from controlplane.sfc.compose import compose, eliminate_redundant, parallel_runs
from controlplane.sfc.sfc_request import MicroEdge, MicroGraph, MicroNode, SfcGraph, expand, request_problems
from controlplane.sfc.templates import VnfTemplate, load_templates, template_problems

IP = ["ipv4_ttl", "ipv4_checksum", "ipv4_src"]


def descriptor(reads=(), writes=(), may_drop=False, stateful=False, gates=(), random=False):
    return {
        "reads": list(reads),
        "writes": list(writes),
        "may_drop": may_drop,
        "stateful": stateful,
        "random": random,
        "gates": list(gates),
    }


DESCRIPTORS = {
    "check": descriptor(reads=IP, may_drop=True),  # like checkip
    "ttl": descriptor(reads=["ipv4_ttl", "ipv4_checksum"], writes=["ipv4_ttl", "ipv4_checksum"], may_drop=True),
    "classify": descriptor(reads=["payload"], gates=["other", "http"]),
    "count": descriptor(reads=["ipv4_src"], stateful=True),
    "swap": descriptor(reads=["eth_src", "eth_dst"], writes=["eth_src", "eth_dst"]),
    "note": descriptor(reads=["ipv4_src"]),  # stateless, never drops, writes nothing, one output
    "work": descriptor(),
}


def graph(nodes: list[tuple[str, str]], edges: list[tuple]) -> MicroGraph:
    g = MicroGraph()
    for name, kind in nodes:
        g.nodes[name] = MicroNode(name, kind, {}, None)
    g.edges = [MicroEdge(*edge) for edge in edges]
    return g


def edges_of(g: MicroGraph) -> set:
    return {(e.source, e.target, e.label) for e in g.edges}


def test_a_check_an_identical_one_passed_on_the_way_goes():
    g = graph([("a", "check"), ("b", "count"), ("c", "check"), ("d", "work")], [("a", "b"), ("b", "c"), ("c", "d")])
    composed, merges, _ = eliminate_redundant(g, DESCRIPTORS)
    assert [(m.removed, m.kept) for m in merges] == [("c", ["a"])]
    assert edges_of(composed) == {("a", "b", None), ("b", "d", None)}


def test_a_check_after_a_writer_of_what_it_reads_stays():
    # A ReadWrite between two readers: the TTL and checksum changed, so the second check may decide otherwise.
    g = graph([("a", "check"), ("t", "ttl"), ("c", "check"), ("d", "work")], [("a", "t"), ("t", "c"), ("c", "d")])
    assert eliminate_redundant(g, DESCRIPTORS)[1] == []


def test_twins_with_other_arguments_or_state_stay():
    g = graph(
        [("a", "check"), ("b", "check"), ("c", "count"), ("e", "count"), ("d", "work")],
        [("a", "b"), ("b", "c"), ("c", "e"), ("e", "d")],
    )
    g.nodes["b"].args = {"strict": True}  # another configuration decides another way
    assert eliminate_redundant(g, DESCRIPTORS)[1] == []  # and counters keep their own state


def test_a_check_passed_on_only_one_way_in_stays():
    g = graph(
        [("s", "classify"), ("a", "check"), ("w", "work"), ("c", "check"), ("d", "work")],
        [("s", "a", "http"), ("s", "w", "other"), ("a", "c"), ("w", "c"), ("c", "d")],
    )
    assert eliminate_redundant(g, DESCRIPTORS)[1] == []


def test_a_classifier_twin_goes_and_each_way_in_follows_its_known_label():
    # s labels; its http way passes a counter, its other way a note; both reach the twin t, which would label alike.
    g = graph(
        [("s", "classify"), ("u", "count"), ("n", "note"), ("t", "classify"), ("h", "work"), ("o", "work")],
        [("s", "u", "http"), ("s", "n", "other"), ("u", "t"), ("n", "t"), ("t", "h", "http"), ("t", "o", "other")],
    )
    composed, merges, _ = eliminate_redundant(g, DESCRIPTORS)
    assert [m.removed for m in merges] == ["t"]
    assert edges_of(composed) == {("s", "u", "http"), ("s", "n", "other"), ("u", "h", None), ("n", "o", None)}


def test_a_classifier_twin_after_a_payload_writer_stays():
    DESCRIPTORS["rewrite"] = descriptor(reads=["payload"], writes=["payload"])
    g = graph(
        [("s", "classify"), ("r", "rewrite"), ("t", "classify"), ("h", "work"), ("o", "work")],
        [("s", "r", "http"), ("s", "o", "other"), ("r", "t"), ("t", "h", "http"), ("t", "o", "other")],
    )
    assert eliminate_redundant(g, DESCRIPTORS)[1] == []


def test_parallel_runs_are_lines_of_non_dropping_disjoint_mnfs_between_two_nodes():
    g = graph(
        [("a", "check"), ("c1", "count"), ("c2", "count"), ("s", "swap"), ("t", "ttl"), ("d", "work")],
        [("a", "c1"), ("c1", "c2"), ("c2", "s"), ("s", "t"), ("t", "d")],
    )
    # Two counters and a MAC swap touch disjoint fields and drop nothing; the TTL decrementer may drop.
    assert parallel_runs(g, DESCRIPTORS) == [("a", ["c1", "c2", "s"], "t")]
    g2 = graph([("c1", "count"), ("c2", "count"), ("d", "work")], [("c1", "c2"), ("c2", "d")])
    assert parallel_runs(g2, DESCRIPTORS) == []  # the entry has no node before it to fork from
    DESCRIPTORS["swap_reader"] = descriptor(reads=["eth_src"])
    g3 = graph(
        [("a", "check"), ("s", "swap"), ("r", "swap_reader"), ("d", "work")], [("a", "s"), ("s", "r"), ("r", "d")]
    )
    assert parallel_runs(g3, DESCRIPTORS) == []  # a writer and a reader of one field


def test_parallel_groups_are_made_only_where_branches_get_cores():
    g = graph(
        [("a", "check"), ("c1", "count"), ("c2", "count"), ("d", "work")], [("a", "c1"), ("c1", "c2"), ("c2", "d")]
    )
    one_core = compose(SfcGraph.model_validate({"vnfs": [{"name": "x", "template": "t"}], "core": 1}), g, DESCRIPTORS)
    assert one_core.groups == [] and one_core.candidates == [["c1", "c2"]] and "one NF core" in one_core.notes[0]
    cores = compose(
        SfcGraph.model_validate({"vnfs": [{"name": "x", "template": "t"}], "cores": [1, 2, 3]}), g, DESCRIPTORS
    )
    assert cores.groups == [["c1", "c2"]]
    assert edges_of(cores.composed) == {("a", "c1", None), ("a", "c2", None), ("c1", "d", None), ("c2", "d", None)}


TYPES = {
    "check": {"descriptor": DESCRIPTORS["check"]},
    "classify": {"descriptor": DESCRIPTORS["classify"]},
    "work": {"descriptor": DESCRIPTORS["work"]},
}


def template(nodes, edges, parameters=None) -> VnfTemplate:
    return VnfTemplate.model_validate(
        {
            "name": "t",
            "parameters": parameters or {},
            "nodes": nodes,
            "edges": [
                dict(zip(("from", "to", "label"), e, strict=True)) if len(e) == 3 else {"from": e[0], "to": e[1]}
                for e in edges
            ],
        }
    )


@pytest.mark.parametrize(
    "nodes, edges, parameters, path, words",
    [
        ([{"name": "a", "type": "nope"}], [("a", "exit")], None, "nodes[0].type", "unknown μNF type"),
        (
            [{"name": "a", "type": "classify"}, {"name": "b", "type": "work"}],
            [("a", "b", "web"), ("a", "exit", "other"), ("b", "exit")],
            None,
            "edges[0].label",
            "not a gate",
        ),
        (
            [{"name": "a", "type": "work"}, {"name": "b", "type": "work"}, {"name": "c", "type": "work"}],
            [("a", "b"), ("a", "c"), ("b", "exit"), ("c", "exit")],
            None,
            "nodes[0]",
            "forks",
        ),
        ([{"name": "a", "type": "work"}, {"name": "b", "type": "work"}], [("a", "b")], None, "nodes[1]", "no edge out"),
        (
            [{"name": "a", "type": "work", "args": {"x": "$missing"}}],
            [("a", "exit")],
            None,
            "nodes[0].args.x",
            "names no parameter",
        ),
        ([{"name": "a", "type": "classify"}], [("a", "exit", "http")], None, "nodes[0]", "gate other too"),
        (
            [{"name": "a", "type": "work"}, {"name": "b", "type": "work"}],
            [("a", "b"), ("b", "a"), ("b", "exit")],
            None,
            "edges",
            "cycle",
        ),
    ],
)
def test_template_errors_name_the_field(nodes, edges, parameters, path, words):
    problems = template_problems(template(nodes, edges, parameters), TYPES)
    assert any(p.startswith(path) and words in m for p, m in problems), problems


TEMPLATES = {
    "plain": template([{"name": "a", "type": "work"}], [("a", "exit")], {"level": {"default": 1}}),
    "split": template([{"name": "s", "type": "classify"}], [("s", "exit", "http"), ("s", "exit:rest", "other")]),
}


@pytest.mark.parametrize(
    "request_doc, path, words",
    [
        ({"vnfs": [{"name": "x", "template": "nope"}], "core": 1}, "sfc.vnfs[0].template", "unknown VNF template"),
        (
            {"vnfs": [{"name": "x", "template": "plain", "args": {"depth": 2}}], "core": 1},
            "sfc.vnfs[0].args.depth",
            "no parameter",
        ),
        ({"vnfs": [{"name": "x", "template": "plain"}]}, "sfc.core", "give the core"),
        (
            {"vnfs": [{"name": "x", "template": "plain"}], "links": [{"from": "x", "to": "y"}], "core": 1},
            "sfc.links[0].to",
            "unknown VNF",
        ),
        (
            {
                "vnfs": [{"name": "x", "template": "split"}, {"name": "y", "template": "plain"}],
                "links": [{"from": "x", "to": "y"}],
                "core": 1,
            },
            "sfc.vnfs[0]",
            "none takes its way out 'exit:rest'",
        ),
        (
            {
                "vnfs": [{"name": "x", "template": "plain"}, {"name": "y", "template": "plain"}],
                "links": [{"from": "x", "to": "y", "label": "rest"}],
                "core": 1,
            },
            "sfc.links[0].label",
            "no way out",
        ),
        (
            {"vnfs": [{"name": "x", "template": "plain"}, {"name": "y", "template": "plain"}], "core": 1},
            "sfc.links",
            "one entry VNF",
        ),
        (
            {
                "vnfs": [{"name": "x", "template": "plain"}, {"name": "x", "template": "plain"}],
                "links": [{"from": "x", "to": "x"}],
                "core": 1,
            },
            "sfc.vnfs[1].name",
            "a second VNF",
        ),
    ],
)
def test_sfc_request_errors_name_the_field(request_doc, path, words):
    problems = request_problems(SfcGraph.model_validate(request_doc), TEMPLATES)
    assert any(p.startswith(path) and words in m for p, m in problems), problems


def test_a_labelled_link_takes_its_exit_and_labelled_ends_meet_at_tx():
    sfc = SfcGraph.model_validate(
        {
            "vnfs": [
                {"name": "x", "template": "split"},
                {"name": "y", "template": "plain"},
                {"name": "z", "template": "plain"},
            ],
            "links": [{"from": "x", "to": "y"}, {"from": "x", "to": "z", "label": "rest"}],
            "core": 1,
        }
    )
    assert request_problems(sfc, TEMPLATES) == []
    micro = expand(sfc, TEMPLATES)
    assert edges_of(micro) == {("x.s", "y.a", "http"), ("x.s", "z.a", "other")}
    assert set(micro.nodes) == {"x.s", "y.a", "z.a"}  # y and z end the SFC with unlabelled edges: both feed the sink
    # Alone, every way out of the classifier ends the SFC: it is the graph's exit, whatever its label.
    alone = expand(SfcGraph.model_validate({"vnfs": [{"name": "x", "template": "split"}], "core": 1}), TEMPLATES)
    assert set(alone.nodes) == {"x.s"} and alone.edges == []
    # A classifier with one way inside its VNF and one out of the (last) VNF: that one needs a node to lead to.
    TEMPLATES["three"] = template(
        [{"name": "s", "type": "classify"}, {"name": "w", "type": "work"}],
        [("s", "w", "http"), ("s", "exit", "other"), ("w", "exit")],
    )
    last = expand(SfcGraph.model_validate({"vnfs": [{"name": "x", "template": "three"}], "core": 1}), TEMPLATES)
    assert edges_of(last) == {("x.s", "x.w", "http"), ("x.s", "tx", "other")}  # x.w ends the SFC unlabelled: an exit
    assert last.nodes["tx"].type == "pass"


def test_compose_command_writes_a_runnable_spec_and_says_what_it_merged(tmp_path):
    request = tmp_path / "web.yaml"
    request.write_text((REPO / "examples" / "web-sfc.yaml").read_text())
    result = tandem("compose", str(request))
    assert result.returncode == 0, result.stderr
    assert "monitor.check (checkip): passed edge.check already" in result.stdout
    assert "appfw.classify (http_classifier): monitor.classify labelled the packet already" in result.stdout
    spec = tmp_path / "web.composed.yaml"
    assert (tmp_path / "web.composed.dot").exists() and (tmp_path / "web.composed-chained.dot").exists()
    checked = tandem("validate", str(spec))
    assert checked.returncode == 0 and "7 NF(s)" in checked.stdout, checked.stdout + checked.stderr
    checked = tandem("validate", str(request))  # the request itself is accepted where a spec is
    assert checked.returncode == 0 and "7 NF(s)" in checked.stdout, checked.stdout + checked.stderr


def test_a_bad_request_exits_2_naming_the_file_and_field(tmp_path):
    request = tmp_path / "bad.yaml"
    request.write_text("name: bad\nsfc: {core: 1, vnfs: [{name: x, template: nope}]}\n")
    result = tandem("compose", str(request))
    assert result.returncode == 2
    assert f"{request}: sfc.vnfs[0].template: unknown VNF template 'nope'" in result.stderr


def test_what_a_merged_classifier_alone_fed_goes_as_unreachable():
    # c1 sends HTTP on to its twin c2, whose `other` gate can then never fire: c2 goes, and with it t, which only
    # that gate fed (left behind, it was a second entry that rewrote packets the chain leaves alone).
    g = graph(
        [("c1", "classify"), ("c2", "classify"), ("urls", "count"), ("t", "ttl"), ("x", "work")],
        [("c1", "c2", "http"), ("c1", "x", "other"), ("c2", "urls", "http"), ("c2", "t", "other"), ("urls", "x")],
    )
    g.edges.append(MicroEdge("t", "x"))
    composed, merges, unreachable = eliminate_redundant(g, DESCRIPTORS)
    assert [m.removed for m in merges] == ["c2"] and unreachable == ["t"]
    assert edges_of(composed) == {("c1", "urls", "http"), ("c1", "x", "other"), ("urls", "x", None)}
    assert [name for name in composed.nodes if not composed.into(name)] == ["c1"]  # one entry


def test_parallel_groups_never_share_a_mnf():
    # A run ends where the next μNF conflicts with it (a second MAC swap); its last branch must not fork the next run.
    g = graph(
        [("a", "check"), ("s1", "swap"), ("n1", "note"), ("s2", "swap"), ("n2", "note"), ("d", "check")],
        [("a", "s1"), ("s1", "n1"), ("n1", "s2"), ("s2", "n2"), ("n2", "d")],
    )
    runs = parallel_runs(g, DESCRIPTORS)
    members = [node for _, run, _ in runs for node in run]
    assert len(members) == len(set(members)), runs
    assert not {before for before, _, _ in runs} & set(members), runs
    assert runs[0] == ("a", ["s1", "n1"], "s2")


def test_a_random_mnf_is_never_merged():
    DESCRIPTORS["loss"] = descriptor(may_drop=True, random=True)  # like drop: a random fraction, reads nothing
    g = graph([("l1", "loss"), ("l2", "loss"), ("d", "work")], [("l1", "l2"), ("l2", "d")])
    assert eliminate_redundant(g, DESCRIPTORS)[1] == []


def test_a_template_with_a_second_way_out_loads_from_a_file(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "split.yaml").write_text(
        "name: split\nnodes: [{name: c, type: http_classifier}]\n"
        "edges: [{from: c, to: 'exit:web', label: http}, {from: c, to: exit, label: other}]\n"
    )
    assert list(load_templates(folder)) == ["split"]
    (folder / "bad.yaml").write_text(
        "name: bad\nnodes: [{name: c, type: http_classifier}]\n"
        "edges: [{from: c, to: 'exit:we b', label: http}, {from: c, to: exit, label: other}]\n"
    )
    with pytest.raises(SpecError) as refused:
        load_templates(folder)
    assert any(path == "edges[0].to" and "exit:NAME" in message for path, message in refused.value.problems)


REQUEST_WITH_OWN_TEMPLATES = """\
name: own
duration: 1
traffic: {rate: 100 kpps}
scheduler: coop
sfc:
  core: 1
  templates: mine
  vnfs:
    - {name: s, template: split}
    - {name: web, template: monitoring}
    - {name: rest, template: edge_firewall, args: {rules: [{dst_port: 99999, action: deny}]}}
  links:
    - {from: s, to: web, label: web}
    - {from: s, to: rest}
"""


def test_a_request_brings_its_own_templates_and_errors_name_its_own_fields(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "split.yaml").write_text(
        "name: split\nnodes: [{name: c, type: http_classifier}]\n"
        "edges: [{from: c, to: 'exit:web', label: http}, {from: c, to: exit, label: other}]\n"
    )
    good = tmp_path / "good.yaml"
    good.write_text(REQUEST_WITH_OWN_TEMPLATES.replace("dst_port: 99999", "dst_port: 22"))
    result = tandem("compose", str(good))
    assert result.returncode == 0, result.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(REQUEST_WITH_OWN_TEMPLATES)
    result = tandem("validate", str(bad))
    assert result.returncode == 2
    assert f"{bad}: sfc.vnfs[2].args.rules[0].dst_port" in result.stderr, result.stderr
    assert "graph.nodes" not in result.stderr
    missing = tmp_path / "missing.yaml"
    missing.write_text(REQUEST_WITH_OWN_TEMPLATES.replace("templates: mine", "templates: theirs"))
    result = tandem("validate", str(missing))
    assert result.returncode == 2 and "sfc.templates: 'theirs' is no folder" in result.stderr, result.stderr
