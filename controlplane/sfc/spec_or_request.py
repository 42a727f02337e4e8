"""What `run`, `compare` and the other commands accept: a spec, or an SFC request, which is composed into one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from controlplane.errors import SpecError
from controlplane.sfc.compose import Composition, compose, composed_chain
from controlplane.sfc.sfc_request import SfcGraph, is_sfc_request, load_request
from controlplane.sfc.templates import VnfTemplate
from controlplane.spec import catalog
from controlplane.spec.deployment import run_config
from controlplane.spec.loading import load_spec, parse_yaml, read_text, spec_from_document
from controlplane.spec.models import Spec


def descriptors() -> dict[str, dict]:
    return {nf["name"]: nf["descriptor"] for nf in catalog.catalog()["nfs"]}


def compose_request(path: str | Path, document: Any = None) -> tuple[Spec, Composition]:
    """An SFC request's composed μNF graph, and the spec that runs it (one chain, named after the request);
    `document`, the file's parsed YAML where the caller has read it already."""
    document, graph, unmerged, templates = load_request(path, document=document)
    composition = compose(graph, unmerged, descriptors())
    name = str(document.get("name", Path(path).stem))
    chain = composed_chain(name.replace(" ", "_")[:32] or "sfc", composition, graph.cores or [graph.core])
    if graph.scale is not None:
        scale_every_fed_node(chain, graph.scale.model_dump(exclude_defaults=True))
    spec_document = dict(document, chains=[chain])
    spec = spec_from_document(spec_document, path)
    # The μNFs' arguments are the data plane's to check; what it finds wrong is named where the request says it.
    try:
        catalog.check(run_config(spec), str(path))
    except SpecError as error:
        raise SpecError(
            str(path), [(request_path(where, chain, graph, templates), message) for where, message in error.problems]
        ) from None
    return spec, composition


_NODE_ARGUMENT = re.compile(r"^chains\[0\]\.graph\.nodes\[(\d+)\]\.args\.(\w+)(.*)$")


def request_path(where: str, chain: dict, graph: SfcGraph, templates: dict[str, VnfTemplate]) -> str:
    """A composed μNF's argument (chains[0].graph.nodes[i].args.KEY...) as the request gives it: the VNF's parameter
    that set it (sfc.vnfs[v].args.P), or the template's own value. Any other path is left as it is."""
    found = _NODE_ARGUMENT.match(where)
    if not found:
        return where
    vnf_name, micro_name = chain["graph"]["nodes"][int(found[1])]["name"].split(".", 1)
    v, vnf = next((v, vnf) for v, vnf in enumerate(graph.vnfs) if vnf.name == vnf_name)
    template = templates[vnf.template]
    n, node = next((n, node) for n, node in enumerate(template.nodes) if node.name == micro_name)
    key, rest = found[2], found[3]
    given = node.args.get(key)
    if isinstance(given, str) and given.startswith("$"):
        parameter = given[1:]
        if parameter in vnf.args:
            return f"sfc.vnfs[{v}].args.{parameter}{rest}"
        return f"sfc.vnfs[{v}].args.{parameter} (not given: template {template.name}'s default{rest})"
    return f"sfc.vnfs[{v}] (template {template.name}: nodes[{n}].args.{key}{rest})"


def scale_every_fed_node(chain: dict, rule: dict) -> None:
    """`sfc.scale`: the rule on every μNF that one other μNF alone feeds (the ones a scaled egress can spread flows
    to); the first μNF takes the generator's ring and a join's μNF several edges, so neither is scaled."""
    edges = chain["graph"]["edges"]
    for node in chain["graph"]["nodes"]:
        into = [e for e in edges if e["to"] == node["name"]]
        if len(into) == 1:
            node["scale"] = dict(rule)


def load_spec_or_request(path: str | Path, *, service: bool = False) -> Spec:
    """The file read and parsed once, then checked as what it is (a `service`'s: spec_from_document)."""
    source = str(path)
    document = parse_yaml(read_text(Path(path), source), source)
    if is_sfc_request(document):
        return compose_request(path, document)[0]
    if isinstance(document, dict):
        return spec_from_document(document, path, service=service)
    return load_spec(path)  # not a mapping: its error says what a spec is
