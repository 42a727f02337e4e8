"""The composer keeps its promise on templates users write, not only on the shipped catalog (a property test,
Hypothesis): random VNF templates (classifiers nested and repeated, named ways out, writers between checks, random and
stateful μNFs, diamonds), written to files and loaded as a request's own, chained into random SFCs with the catalog's,
composed with parallel groups on and off; random frames, the unusual ones among them, go through the chained and the
composed graph (build/tandem-graph-eval runs the real μNFs): every packet must meet the same fate with the same bytes
and every kept μNF end with the same report, or the request must be refused with a request-level reason."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_compose_semantics import GRAPH_EVAL, RULES, evaluate, frame_lists

from controlplane.errors import SpecError
from controlplane.sfc.compose import compose, eval_graph
from controlplane.sfc.sfc_request import SfcGraph, expand, request_problems, request_templates
from controlplane.sfc.spec_or_request import descriptors
from controlplane.sfc.templates import EXIT
from controlplane.spec import catalog

pytestmark = pytest.mark.skipif(not GRAPH_EVAL.exists(), reason="the data plane is not built (./scripts/setup.sh)")

# μNFs one line in, one line out, with arguments drawn from small sets. `drop` is random: at 0 or 1 its fate is the
# same in both graphs (two graphs draw their own random numbers), and the composer must still never merge it.
LINE_MNFS = {
    "checkip": st.just({}),
    "ttl": st.just({}),
    "macswap": st.just({}),
    "validate_url": st.just({}),
    "counter": st.just({}),
    "count_url": st.sampled_from([{}, {"max_urls": 1}]),
    "pass": st.just({}),
    "drop": st.sampled_from([{"fraction": 0}, {"fraction": 1}]),
    "firewall": st.sampled_from(
        [{"rules": "$rules", "default": "$default"}, {"rules": [RULES[0]], "default": "allow"}]
    ),
}
# Drawn twice as often: the μNFs that neither drop nor conflict, so that runs of them (parallel groups) come up.
KINDS = sorted(LINE_MNFS) + ["counter", "count_url", "macswap"]
PARAMETERS = {"rules": {"default": []}, "default": {"default": "allow"}}


@st.composite
def bodies(draw, depth: int) -> list:
    """A template's body: μNFs in a line, and classifiers whose two gates each lead to a body of their own (a diamond
    where both meet again); ('exit', NAME) leaves the VNF by a way out of its own."""
    items = []
    for _ in range(draw(st.integers(0 if depth else 1, 3))):
        if depth < 2 and draw(st.integers(0, 3)) == 0:
            http = draw(bodies(depth + 1))
            other = draw(st.one_of(bodies(depth + 1), st.just([("exit", "rest")]))) if depth == 0 else []
            items.append(("classify", http, other or draw(bodies(depth + 1))))
        else:
            kind = draw(st.sampled_from(KINDS))
            items.append((kind, draw(LINE_MNFS[kind])))
    return items


def template_document(name: str, items: list) -> dict:
    """A template's YAML document from a body; two gates that would lead to one node get a `pass` between."""
    nodes, edges = [], []

    def node(kind: str, args: dict) -> str:
        nodes.append({"name": f"n{len(nodes)}", "type": kind, **({"args": args} if args else {})})
        return nodes[-1]["name"]

    def lay(body: list, then: str) -> str:
        for item in reversed(body):
            if item[0] == "exit":
                then = f"{EXIT}:{item[1]}"
            elif item[0] == "classify":
                c = node("http_classifier", {})
                http, other = lay(item[1], then), lay(item[2], then)
                if http == other:
                    other = node("pass", {})
                    edges.append({"from": other, "to": then})
                edges.extend([{"from": c, "to": http, "label": "http"}, {"from": c, "to": other, "label": "other"}])
                then = c
            else:
                n = node(*item)
                edges.append({"from": n, "to": then})
                then = n
        return then

    lay(items, EXIT)
    return {"name": name, "parameters": PARAMETERS, "nodes": nodes, "edges": edges}


@st.composite
def requests(draw) -> tuple[dict[str, dict], dict]:
    """Own templates (by name) and an SFC request over them and the catalog: a line of VNFs, each VNF's way out
    `exit:rest` (where it has one) linked to the line's last VNF."""
    own = {f"t{i}": template_document(f"t{i}", draw(bodies(0))) for i in range(draw(st.integers(1, 3)))}
    names = sorted(own) + ["edge_firewall", "monitoring", "application_firewall", "router"]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    vnfs = [{"name": f"v{i}", "template": t} for i, t in enumerate(chosen)]
    for vnf in vnfs:
        if vnf["template"] in own or vnf["template"] == "edge_firewall":
            vnf["args"] = draw(st.sampled_from([{}, {"rules": [RULES[1]], "default": "deny"}]))
    links = [{"from": a["name"], "to": b["name"]} for a, b in zip(vnfs, vnfs[1:], strict=False)]
    last = vnfs[-1]["name"]
    for vnf in vnfs[:-2]:
        document = own.get(vnf["template"], {"edges": []})
        if any(e["to"] == f"{EXIT}:rest" for e in document["edges"]):
            links.append({"from": vnf["name"], "to": last, "label": "rest"})
            event("a VNF leaves by a named way out")
    parallel = draw(st.sampled_from(["on", "off"]))
    return own, {"vnfs": vnfs, "links": links, "core": 1, "parallel": parallel}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(drawn=requests(), frames=frame_lists(10))
def test_chained_and_composed_agree_on_any_template_or_the_request_is_refused(drawn, frames):
    own, request = drawn
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "mine").mkdir()
        for name, document in own.items():
            (Path(folder) / "mine" / f"{name}.yaml").write_text(yaml.safe_dump(document))
        sfc = SfcGraph.model_validate(dict(request, templates="mine"))
        try:
            templates = request_templates(sfc, Path(folder) / "request.yaml")
        except SpecError as refused:  # a template refused from its file names the file and the field
            assert refused.source.endswith(".yaml") and refused.problems, refused
            event("refused: a template")
            return
    problems = request_problems(sfc, templates)
    if problems:  # refused with a reason at the request's own fields
        assert all(path.startswith("sfc") for path, _ in problems), problems
        event("refused: the request")
        return
    unmerged = expand(sfc, templates)
    composition = compose(sfc, unmerged, DESCRIPTORS)
    random = {name for name, node in unmerged.nodes.items() if DESCRIPTORS[node.type]["random"]}
    assert not random & {m.removed for m in composition.merges}, composition.merges
    event(f"composed: {min(len(composition.merges), 3)}+ merged, {'a' if composition.groups else 'no'} parallel group")
    if composition.unreachable:
        event("composed: unreachable μNFs removed")
    for graph in (unmerged, composition.composed):  # one entry (graph-eval refuses a graph it cannot run)
        names = list(graph.nodes)
        assert [n for n in names if not graph.into(n)] == names[:1], eval_graph(graph)
    out = evaluate({"chained": eval_graph(unmerged), "composed": eval_graph(composition.composed)}, frames)
    chained, composed = out["chained"], out["composed"]
    why = json.dumps({"merged": [m.removed for m in composition.merges], "groups": composition.groups})
    for frame, a, b in zip(frames, chained["packets"], composed["packets"], strict=True):
        assert a == b, (frame, a, b, why)
    for name, report in composed["reports"].items():
        assert chained["reports"][name] == report, (name, why)
    if any(report.get("reassembled") for report in chained["reports"].values()):
        event("a request line split across segments was judged whole")


DESCRIPTORS = descriptors() if GRAPH_EVAL.exists() else {}
assert not GRAPH_EVAL.exists() or {nf["name"] for nf in catalog.catalog()["nfs"]} >= set(LINE_MNFS)


def test_two_random_drops_in_a_row_stay_two(tmp_path):
    # Two VNFs that each drop half their packets at random: 4,000 copies of one frame leave ~1,000 (sigma 27), through
    # the chain and through the composed graph alike; merged as a redundant check, the second would let ~2,000 by.
    (tmp_path / "mine").mkdir()
    lossy = {"name": "lossy", "nodes": [{"name": "l", "type": "drop", "args": {"fraction": 0.5}}]}
    (tmp_path / "mine" / "lossy.yaml").write_text(yaml.safe_dump(dict(lossy, edges=[{"from": "l", "to": EXIT}])))
    sfc = SfcGraph.model_validate(
        {
            "templates": "mine",
            "core": 1,
            "vnfs": [{"name": "a", "template": "lossy"}, {"name": "b", "template": "lossy"}],
            "links": [{"from": "a", "to": "b"}],
        }
    )
    templates = request_templates(sfc, tmp_path / "request.yaml")
    unmerged = expand(sfc, templates)
    composition = compose(sfc, unmerged, DESCRIPTORS)
    assert composition.merges == []
    frame = "0200000000010200000000020800" + "4500001c0007000040110000c0a8010208080808" + "0400003500080000"
    out = evaluate({"chained": eval_graph(unmerged), "composed": eval_graph(composition.composed)}, [frame] * 4000)
    for name in ("chained", "composed"):
        delivered = sum(p["fate"] == "delivered" for p in out[name]["packets"])
        assert 850 <= delivered <= 1150, (name, delivered)
