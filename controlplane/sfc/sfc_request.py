"""An SFC request (μNF, Sec. IV-D): the VNFs an operator knows, linked in a directed graph, with the traffic and the
run settings of a spec; no μNF is named. Expanded here into the μNF graph that chains the VNFs' templates as they
are (every VNF parses and classifies for itself); controlplane/sfc/compose.py then takes the repeated work out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from controlplane.errors import SpecError
from controlplane.sfc.templates import (
    EXIT,
    TEMPLATE_DIR,
    VnfTemplate,
    load_templates,
    template_names,
    ways_out,
)
from controlplane.spec.chain_graph import Edge, topological_order
from controlplane.spec.loading import parse_yaml, pydantic_problems, read_text
from controlplane.spec.models import ScaleSpec, Spec
from controlplane.spec.strict_model import Strict

TX = "tx"  # the μNF (type pass) an SFC ends at where its last exits are labelled edges


class VnfInstance(Strict):
    name: str = Field(min_length=1, max_length=24, pattern=r"^[A-Za-z0-9_]+$")
    template: str
    args: dict[str, Any] = Field(default_factory=dict)  # the template's parameters


class SfcLink(Strict):
    source: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)
    # Which way out of `from` this link takes: the template's `exit:LABEL`; unlabelled, its `exit`.
    label: str | None = Field(default=None, min_length=1)


class SfcGraph(Strict):
    vnfs: list[VnfInstance] = Field(min_length=1)
    links: list[SfcLink] = Field(default_factory=list)
    core: int | None = Field(default=None, ge=0)  # every μNF's core (a parallel group's branches: `cores`)
    cores: list[int] | None = Field(default=None, min_length=1)  # the line on the first, branches on the others
    parallel: str = Field(default="auto", pattern="^(auto|on|off)$")  # auto: only where branches get cores of their own
    # μNF's auto-scaling (IV-E): every μNF of the composed graph fed by one other μNF gets spare instances and this
    # rule, so the autoscaler, watching the drops at every port pair, finds the bottleneck and scales it out.
    scale: ScaleSpec | None = None
    # A folder of the request's own VNF templates (relative to the request), checked as the catalog's are; a template
    # there shadows the catalog's of the same name.
    templates: str | None = Field(default=None, min_length=1)


class SfcRequest(Spec):
    """An SFC request's whole document, for its JSON Schema: a spec whose chain the composer makes from `sfc`."""

    chains: SkipJsonSchema[None] = None
    sfc: SfcGraph


@dataclass
class MicroNode:
    name: str  # VNF.μNF, or tx
    type: str
    args: dict
    vnf: str | None  # None for tx


@dataclass
class MicroEdge:
    source: str
    target: str
    label: str | None = None


@dataclass
class MicroGraph:
    nodes: dict[str, MicroNode] = field(default_factory=dict)  # in an order where every edge goes forward
    edges: list[MicroEdge] = field(default_factory=list)

    def out_of(self, name: str) -> list[MicroEdge]:
        return [e for e in self.edges if e.source == name]

    def into(self, name: str) -> list[MicroEdge]:
        return [e for e in self.edges if e.target == name]


def is_sfc_request(document: Any) -> bool:
    return isinstance(document, dict) and "sfc" in document


def read_request(path: str | Path, document: Any = None) -> tuple[dict, SfcGraph]:
    """The spec fields of an SFC request file (everything but `sfc`) and its checked SFC graph; `document`, the
    file's parsed YAML where the caller has read it already."""
    source = str(path)
    if document is None:
        document = parse_yaml(read_text(Path(path), source), source)
    if not is_sfc_request(document):
        raise SpecError(source, [("sfc", "an SFC request names its VNFs under sfc: {vnfs, links}")])
    document = dict(document)
    if "chains" in document:
        raise SpecError(source, [("chains", "an SFC request has no chains: the composer makes its one chain from sfc")])
    try:
        graph = SfcGraph.model_validate(document.pop("sfc"))
    except ValidationError as error:
        raise SpecError(
            source, [(f"sfc.{field}" if field else "sfc", message) for field, message in pydantic_problems(error)]
        ) from None
    return document, graph


def request_problems(
    graph: SfcGraph, templates: dict[str, VnfTemplate], solver_places: bool = False
) -> list[tuple[str, str]]:
    """Unknown templates and parameters, links to unknown VNFs or exits, an exit taken twice or by no link of a VNF
    that has links, cycles, and more than one entry VNF."""
    problems = []
    names = [vnf.name for vnf in graph.vnfs]
    for v, vnf in enumerate(graph.vnfs):
        if names.index(vnf.name) != v:
            problems.append((f"sfc.vnfs[{v}].name", f"a second VNF named {vnf.name!r}"))
        if vnf.template not in templates:
            problems.append(
                (
                    f"sfc.vnfs[{v}].template",
                    f"unknown VNF template {vnf.template!r} "
                    f"(known: {', '.join(sorted(set(templates) | set(template_names())))})",
                )
            )
            continue
        for key in vnf.args:
            if key not in templates[vnf.template].parameters:
                problems.append(
                    (
                        f"sfc.vnfs[{v}].args.{key}",
                        f"template {vnf.template!r} has no parameter {key!r} "
                        f"(parameters: {', '.join(templates[vnf.template].parameters) or 'none'})",
                    )
                )
    if graph.core is None and graph.cores is None and not solver_places:
        problems.append(
            (
                "sfc.core",
                "give the core of the μNFs (core: N, or cores: [N, ...]), or let the solver place them "
                "(placement: fewest_cores or auto)",
            )
        )
    template_of = {vnf.name: templates.get(vnf.template) for vnf in graph.vnfs}
    taken: dict[tuple[str, str], int] = {}
    for link_index, link in enumerate(graph.links):
        for key, name in (("from", link.source), ("to", link.to)):
            if name not in template_of:
                problems.append((f"sfc.links[{link_index}].{key}", f"unknown VNF {name!r} (VNFs: {', '.join(names)})"))
        if link.source not in template_of or template_of[link.source] is None:
            continue
        exit_name = EXIT if link.label is None else f"{EXIT}:{link.label}"
        exits = ways_out(template_of[link.source])
        if exit_name not in exits:
            problems.append(
                (
                    f"sfc.links[{link_index}].label",
                    f"VNF {link.source!r} ({template_of[link.source].name}) has no way out "
                    f"{exit_name!r} (its exits: {', '.join(exits)})",
                )
            )
        elif (link.source, exit_name) in taken:
            problems.append(
                (
                    f"sfc.links[{link_index}]",
                    f"{link.source!r}'s {exit_name!r} is taken by links[{taken[(link.source, exit_name)]}] "
                    "already: one way out leads to one VNF",
                )
            )
        else:
            taken[(link.source, exit_name)] = link_index
    for v, vnf in enumerate(graph.vnfs):
        template = template_of[vnf.name]
        if template is None or not any(link.source == vnf.name for link in graph.links):
            continue
        for exit_name in ways_out(template):
            if (vnf.name, exit_name) not in taken:
                problems.append(
                    (f"sfc.vnfs[{v}]", f"VNF {vnf.name!r} has links, but none takes its way out {exit_name!r}")
                )
    targets = {link.to for link in graph.links}
    entries = [name for name in names if name not in targets]
    if len(entries) != 1:
        problems.append(
            (
                "sfc.links",
                "an SFC has one entry VNF, where the traffic comes in; "
                + (f"these have no link in: {', '.join(entries)}" if entries else "every VNF has a link in (a cycle)"),
            )
        )
    elif problems == []:
        order = _vnf_order(entries[0], graph)
        if len(order) != len(names):
            problems.append(
                (
                    "sfc.links",
                    f"the links close a cycle or leave VNFs unreached: {', '.join(n for n in names if n not in order)}",
                )
            )
    return problems


def _vnf_order(entry: str, graph: SfcGraph) -> list[str]:
    """The VNFs in an order where every link goes forward (Kahn's algorithm); shorter than the VNFs on a cycle."""
    into = {vnf.name: sum(link.to == vnf.name for link in graph.links) for vnf in graph.vnfs}
    ready, order = [entry], []
    while ready:
        name = ready.pop(0)
        order.append(name)
        for link in graph.links:
            if link.source == name:
                into[link.to] -= 1
                if into[link.to] == 0:
                    ready.append(link.to)
    return order


def expand(graph: SfcGraph, templates: dict[str, VnfTemplate]) -> MicroGraph:
    """The SFC as its VNFs chain it: each VNF's template with its μNFs named VNF.μNF and their arguments generated
    from the VNF's, each way out joined to the entry μNF of the VNF its link leads to; the ways out of the last
    VNFs lead to the sink (through a `tx` pass μNF where they are labelled edges, which need a node to lead to)."""
    micro = MicroGraph()
    vnfs = {vnf.name: vnf for vnf in graph.vnfs}
    entry_of = {}
    dangling: list[MicroEdge] = []  # ways out of VNFs that no link takes: to the SFC's end
    order = _vnf_order(next(v.name for v in graph.vnfs if all(link.to != v.name for link in graph.links)), graph)
    for name in order:
        vnf, template = vnfs[name], templates[vnfs[name].template]
        for node in template.nodes:
            micro.nodes[f"{name}.{node.name}"] = MicroNode(
                f"{name}.{node.name}", node.type, template.args_for(node, vnf.args), name
            )
        targets = {e.to for e in template.edges}
        entry_of[name] = f"{name}.{next(n.name for n in template.nodes if n.name not in targets)}"
    for name in order:
        vnf, template = vnfs[name], templates[vnfs[name].template]
        leads_to = {
            (EXIT if link.label is None else f"{EXIT}:{link.label}"): link.to
            for link in graph.links
            if link.source == name
        }
        for e in template.edges:
            source = f"{name}.{e.source}"
            if e.to == EXIT or e.to.startswith(EXIT + ":"):
                if e.to in leads_to:
                    micro.edges.append(MicroEdge(source, entry_of[leads_to[e.to]], e.label))
                else:
                    dangling.append(MicroEdge(source, TX, e.label))
            else:
                micro.edges.append(MicroEdge(source, f"{name}.{e.to}", e.label))
    # A μNF all of whose ways lead out of the SFC is an exit of the graph, feeding the sink. A labelled way out
    # beside ways that go on needs a node to lead to: a pass μNF (tx, tx2, ... where one μNF has several).
    linked = {e.source for e in micro.edges}
    for edge in dangling:
        if edge.source not in linked:
            continue
        taken = {e.target for e in micro.edges if e.source == edge.source}
        edge.target = next(
            name for name in (TX if i == 1 else f"{TX}{i}" for i in range(1, len(dangling) + 2)) if name not in taken
        )
        micro.nodes.setdefault(edge.target, MicroNode(edge.target, "pass", {}, None))
        micro.edges.append(edge)
    names = list(micro.nodes)
    order = topological_order(names, [Edge(e.source, e.target, e.label, "") for e in micro.edges])
    micro.nodes = {name: micro.nodes[name] for name in order}
    return micro


def request_templates(graph: SfcGraph, path: Path) -> dict[str, VnfTemplate]:
    """The request's own templates (every one of its folder, sfc.templates, is checked) and those of the catalog it
    names; only those are read from the catalog, so a broken one there stops no request that does not use it."""
    wanted = {vnf.template for vnf in graph.vnfs}
    own = {}
    if graph.templates is not None:
        folder = path.parent / graph.templates
        if not folder.is_dir():
            raise SpecError(str(path), [("sfc.templates", f"{graph.templates!r} is no folder (looked at {folder})")])
        own = load_templates(folder)
    return {**load_templates(TEMPLATE_DIR, wanted - set(own)), **own}


def load_request(
    path: str | Path, templates: dict[str, VnfTemplate] | None = None, document: Any = None
) -> tuple[dict, SfcGraph, MicroGraph, dict[str, VnfTemplate]]:
    """Reads and checks an SFC request; returns its spec fields, its SFC graph, the expanded μNF graph and the
    templates it was expanded from."""
    document, graph = read_request(path, document)
    templates = templates if templates is not None else request_templates(graph, Path(path))
    problems = request_problems(graph, templates, solver_places=document.get("placement") in ("auto", "fewest_cores"))
    if problems:
        raise SpecError(str(path), problems)
    return document, graph, expand(graph, templates), templates
