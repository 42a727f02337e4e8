"""What `run`, `compare` and the other commands accept: a spec, or an SFC request, which is composed into one."""
from __future__ import annotations

from pathlib import Path

from controlplane import catalog
from controlplane.compose import Composition, compose, composed_chain
from controlplane.spec import Spec, _parse_yaml, _read_text, load_spec, spec_from_document
from controlplane.sfc import is_sfc_request, load_request


def descriptors() -> dict[str, dict]:
    return {nf["name"]: nf["descriptor"] for nf in catalog.catalog()["nfs"]}


def compose_request(path: str | Path) -> tuple[Spec, Composition]:
    """An SFC request's composed μNF graph, and the spec that runs it (one chain, named after the request)."""
    document, graph, unmerged = load_request(path)
    composition = compose(graph, unmerged, descriptors())
    name = str(document.get("name", Path(path).stem))
    spec_document = dict(document, chains=[composed_chain(name.replace(" ", "_")[:32] or "sfc", composition, graph.cores or [graph.core])])
    return spec_from_document(spec_document, path), composition


def load_spec_or_request(path: str | Path) -> Spec:
    source = str(path)
    if is_sfc_request(_parse_yaml(_read_text(Path(path), source), source)):
        return compose_request(path)[0]
    return load_spec(path)
