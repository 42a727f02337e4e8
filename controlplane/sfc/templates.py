"""VNF templates (μNF, Sec. IV-D): a VNF as a graph of μNFs with labelled links, its way out named `exit` (and
further ways out `exit:NAME`, which a request's labelled links take), and the parameters its μNFs' arguments are
generated from. The shipped catalog is catalog/vnf-templates/*.yaml; a request may name a folder of its own."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from controlplane.errors import SpecError
from controlplane.spec import catalog
from controlplane.spec.chain_graph import Edge, graph_problems
from controlplane.spec.loading import parse_yaml, pydantic_problems, read_text
from controlplane.spec.models import EdgeSpec
from controlplane.spec.strict_model import Strict

TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "catalog" / "vnf-templates"
EXIT = "exit"  # the pseudo-node every template path ends at: where the next VNF (or the SFC's end) takes over
NAMED_EXIT = re.compile(rf"^{EXIT}:[A-Za-z0-9_]+$")  # a second way out, taken by a request's link labelled NAME


class Parameter(Strict):
    default: Any = None
    help: str = ""


class TemplateNode(Strict):
    name: str = Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_]+$")
    type: str
    args: dict[str, Any] = Field(default_factory=dict)  # a value "$p" is the VNF's parameter p


class VnfTemplate(Strict):
    name: str
    description: str = ""
    parameters: dict[str, Parameter] = Field(default_factory=dict)
    nodes: list[TemplateNode] = Field(min_length=1)
    edges: list[EdgeSpec] = Field(default_factory=list)

    def args_for(self, node: TemplateNode, given: dict[str, Any]) -> dict[str, Any]:
        """The μNF's arguments for a VNF instance given `given` (its configuration generator: "$p" becomes the
        instance's value of parameter p, or the parameter's default)."""

        def value(v):
            if isinstance(v, str) and v.startswith("$"):
                parameter = v[1:]
                return given[parameter] if parameter in given else self.parameters[parameter].default
            return v

        return {key: value(v) for key, v in node.args.items()}


def ways_out(template: VnfTemplate) -> list[str]:
    """The ways out its edges take: `exit`, `exit:NAME`, or both."""
    return sorted({e.to for e in template.edges if e.to == EXIT or e.to.startswith(EXIT + ":")})


def template_problems(template: VnfTemplate, nf_types: dict[str, dict]) -> list[tuple[str, str]]:
    """What makes a template unusable: unknown μNF types or parameters, labels that are not the source's gates,
    the graph checks of a chain (with `exit` as its one way out), a node that does not reach `exit`, and a fork
    (parallel groups are the composer's to make)."""
    problems = []
    names = [node.name for node in template.nodes]
    for n, node in enumerate(template.nodes):
        if node.name == EXIT:
            problems.append((f"nodes[{n}].name", f"{EXIT!r} is the template's way out, not a node name"))
        if node.type not in nf_types:
            problems.append((f"nodes[{n}].type", f"unknown μNF type {node.type!r} (./tandem nfs lists them)"))
        for key, value in node.args.items():
            if isinstance(value, str) and value.startswith("$") and value[1:] not in template.parameters:
                problems.append(
                    (
                        f"nodes[{n}].args.{key}",
                        f"{value!r} names no parameter of the template "
                        f"(parameters: {', '.join(template.parameters) or 'none'})",
                    )
                )
    types = {node.name: node.type for node in template.nodes}
    edges = [Edge(e.source, e.to, e.label, f"edges[{i}]") for i, e in enumerate(template.edges)]
    for edge in edges:
        if edge.label is not None and edge.source in types and types[edge.source] in nf_types:
            gates = nf_types[types[edge.source]]["descriptor"]["gates"]
            if edge.label not in gates:
                problems.append(
                    (
                        f"{edge.where}.label",
                        f"{edge.label!r} is not a gate of {edge.source!r} "
                        f"({types[edge.source]}: {', '.join(gates) or 'no gates'})",
                    )
                )
    for edge in edges:
        if edge.target.startswith(EXIT + ":") and not NAMED_EXIT.match(edge.target):
            problems.append(
                (f"{edge.where}.to", f"{edge.target!r}: a named way out is {EXIT}:NAME, NAME of letters, digits and _")
            )
    exits = [EXIT] + [way for way in ways_out(template) if NAMED_EXIT.match(way)]
    problems += graph_problems(names + exits, edges, "")
    leaving = {name: [e for e in edges if e.source == name] for name in names}
    for n, name in enumerate(names):
        if not leaving[name]:
            problems.append(
                (f"nodes[{n}]", f"node {name!r} has no edge out: every path of a template ends at {EXIT!r}")
            )
        elif any(e.label is not None for e in leaving[name]) and types[name] in nf_types:
            missing = [
                g for g in nf_types[types[name]]["descriptor"]["gates"] if g not in {e.label for e in leaving[name]}
            ]
            if missing:
                problems.append(
                    (
                        f"nodes[{n}]",
                        f"node {name!r} sends packets to gate {', '.join(missing)} too: give "
                        f"{'it' if len(missing) == 1 else 'each'} an edge (to {EXIT!r} to leave the VNF)",
                    )
                )
        elif len(leaving[name]) > 1 and all(e.label is None for e in leaving[name]):
            problems.append(
                (
                    f"nodes[{n}]",
                    f"node {name!r} forks (several unlabelled edges): templates are sequential; "
                    "the composer runs μNFs in parallel where their descriptors allow",
                )
            )
    # The chain checks name a spec's graph.nodes[i]; a template's nodes are at its top.
    return [
        (path.replace(".graph.", "", 1) if path.startswith(".graph.") else path, message) for path, message in problems
    ]


def load_template(path: Path) -> VnfTemplate:
    source = str(path)
    document = parse_yaml(read_text(path, source), source)
    if not isinstance(document, dict):
        raise SpecError(source, [("", "a VNF template is a YAML mapping with name, nodes and edges")])
    try:
        template = VnfTemplate.model_validate(document)
    except ValidationError as error:
        raise SpecError(source, pydantic_problems(error)) from None
    problems = template_problems(template, {nf["name"]: nf for nf in catalog.catalog()["nfs"]})
    if template.name != path.stem:
        problems.append(("name", f"must be the file's name, {path.stem!r}, got {template.name!r}"))
    if problems:
        raise SpecError(source, problems)
    return template


def template_names(directory: Path = TEMPLATE_DIR) -> list[str]:
    """The names of a folder's templates, without reading them."""
    return sorted(path.stem for path in directory.glob("*.yaml"))


def load_templates(directory: Path = TEMPLATE_DIR, names: set[str] | None = None) -> dict[str, VnfTemplate]:
    """The templates of a folder by name: every one, or those of `names` that it has."""
    return {
        path.stem: load_template(path)
        for path in sorted(directory.glob("*.yaml"))
        if names is None or path.stem in names
    }
