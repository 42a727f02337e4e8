"""How a scaled NF reaches the data plane: its instances as NFs of their own with a copy of every edge, an SFC
request's `sfc.scale` on every μNF one other μNF feeds, and the instance count in `validate`."""

from pathlib import Path

import yaml

from controlplane.sfc.spec_or_request import compose_request, scale_every_fed_node
from controlplane.spec.deployment import run_config
from controlplane.spec.loading import load_spec

REPO = Path(__file__).resolve().parents[2]


def test_a_scaled_nf_becomes_instances_with_every_edge_copied_and_its_rule_on_the_first():
    config = run_config(load_spec(REPO / "examples" / "scale-out.yaml"))
    [chain] = config["chains"]
    names = [nf["name"] for nf in chain["nfs"]]
    assert names == ["rx", "classify", "classify.2", "tx"]  # each instance right after the one before
    first, second = chain["nfs"][1], chain["nfs"][2]
    assert (first["scale_group"], first["instance"], second["scale_group"], second["instance"]) == (
        "classify",
        1,
        "classify",
        2,
    )
    assert first["scale"] == {"window_ms": 100, "cooldown_ms": 500, "idle_ms": 1000, "idle_below": 0.5}
    assert "scale" not in second and second["core"] == first["core"]  # no scale.cores: the NF's own core
    edges = {(edge["from"], edge["to"]) for edge in chain["edges"]}
    assert edges == {("rx", "classify"), ("rx", "classify.2"), ("classify", "tx"), ("classify.2", "tx")}


def test_sfc_scale_goes_on_every_mu_nf_that_one_other_feeds(tmp_path):
    request = yaml.safe_load((REPO / "examples" / "web-sfc.yaml").read_text())
    request["sfc"]["scale"] = {"max_instances": 3, "window_ms": 50}
    path = tmp_path / "scaled-sfc.yaml"
    path.write_text(yaml.safe_dump(request))
    spec, _ = compose_request(path)
    nodes = spec.chains[0].graph.nodes
    scaled = {node.name for node in nodes if node.scale}
    assert nodes[0].name not in scaled  # the first μNF takes the generator's ring
    assert scaled and all(node.scale.max_instances == 3 and node.scale.window_ms == 50 for node in nodes if node.scale)
    edges = spec.chains[0].graph.edges
    for node in nodes[1:]:
        assert (node.name in scaled) == (sum(edge.to == node.name for edge in edges) == 1), node.name


def test_a_join_is_not_scaled():
    chain = {
        "graph": {
            "nodes": [{"name": n} for n in "abcd"],
            "edges": [
                {"from": "a", "to": "b"},
                {"from": "a", "to": "c"},
                {"from": "b", "to": "d"},
                {"from": "c", "to": "d"},
            ],
        }
    }
    scale_every_fed_node(chain, {"max_instances": 2})
    assert [node.get("scale") for node in chain["graph"]["nodes"]] == [
        None,
        {"max_instances": 2},
        {"max_instances": 2},
        None,
    ]


def test_a_spare_goes_where_the_placement_model_leaves_room_for_it_else_on_its_nfs_core():
    from controlplane.planning.spare_cores import Spare, choose_cores

    load = {1: 0.9, 2: 0.3, 3: 0.6}
    chosen = choose_cores([Spare("a.2", 1, 0.45), Spare("b.2", 1, 0.45), Spare("c.2", 2, 0.5)], load)
    assert chosen["a.2"][0] == 2 and "0.70 of it free" in chosen["a.2"][1]  # the most headroom, and it fits
    assert (
        chosen["b.2"][0] == 1 and "at most 0.40 free elsewhere" in chosen["b.2"][1]
    )  # 3 has 0.40, 2 now 0.25: its own
    assert chosen["c.2"] == (
        2,
        "its NF's core 2: it needs 0.50 of a core, at most 0.40 free elsewhere",
    )  # 0.40 on core 3 is short
    assert load == {1: 0.9, 2: 0.3, 3: 0.6}  # the caller's loads are left as they were


def test_without_another_nf_core_a_spare_stays_on_its_nfs():
    from controlplane.planning.spare_cores import Spare, choose_cores

    assert choose_cores([Spare("a.2", 1, 0.1)], {1: 0.2}) == {
        "a.2": (1, "its NF's core 1: it needs 0.10 of a core, no other NF core")
    }
