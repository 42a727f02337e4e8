"""The ServiceChain CRD: generated from the spec's models (the committed file cannot drift), a structural schema by
Kubernetes' rules, and the models' own checks of the examples and of what no schema expresses. What the API server
accepts and refuses is tested on a real one: test_api_server.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import REPO, tandem
from controlplane.kubernetes.crd import CRD_PATH, GROUP, VERSION, crd_text
from controlplane.kubernetes.service_chain import ServiceChainSpec

EXAMPLES = sorted((REPO / "deploy" / "kubernetes" / "examples").glob("*.yaml"))


def open_api_schema() -> dict:
    document = yaml.safe_load(CRD_PATH.read_text())
    return document["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_the_committed_crd_is_the_one_the_models_generate():
    assert CRD_PATH.read_text() == crd_text(), "the CRD drifted from the models: ./tandem schema --crd --out " + str(
        CRD_PATH.relative_to(REPO)
    )
    printed = tandem("schema", "--crd")
    assert printed.returncode == 0 and printed.stdout == crd_text()


def structural_problems(schema: dict, path: str = "") -> list[str]:
    """Kubernetes' rules for a structural schema (apiextensions.k8s.io/v1): a type on every node but int-or-string
    and preserve-unknown-fields ones; no $ref, const or definitions; within anyOf/allOf/oneOf/not no type,
    default, nullable, description or additionalProperties; properties and additionalProperties never together."""
    problems = []
    for forbidden in ("$ref", "const", "$defs", "definitions", "title", "default"):
        if forbidden in schema:
            problems.append(f"{path or '/'}: {forbidden}")
    marked = schema.get("x-kubernetes-int-or-string") or schema.get("x-kubernetes-preserve-unknown-fields")
    if "type" not in schema and not marked:
        problems.append(f"{path or '/'}: no type")
    if "properties" in schema and "additionalProperties" in schema:
        problems.append(f"{path or '/'}: properties and additionalProperties")
    if schema.get("additionalProperties") is False:
        problems.append(f"{path or '/'}: additionalProperties false")
    for keyword in ("anyOf", "allOf", "oneOf"):
        for index, branch in enumerate(schema.get(keyword, [])):
            for key in ("type", "default", "nullable", "description", "additionalProperties"):
                if key in branch:
                    problems.append(f"{path}/{keyword}/{index}: {key}")
    for name, child in (schema.get("properties") or {}).items():
        problems += structural_problems(child, f"{path}/{name}")
    if isinstance(schema.get("additionalProperties"), dict):
        problems += structural_problems(schema["additionalProperties"], f"{path}/*")
    if "items" in schema:
        problems += structural_problems(schema["items"], f"{path}[]")
    return problems


def test_the_schema_is_structural():
    schema = open_api_schema()
    assert structural_problems(schema) == []
    spec = schema["properties"]["spec"]
    assert {"chains", "sfc", "traffic", "scheduler", "placement"} <= set(spec["properties"])
    assert spec["properties"]["placement"]["enum"] == ["fewest_cores", "throughput"]
    status = schema["properties"]["status"]
    assert {"conditions", "placement", "hops"} <= set(status["properties"])


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_every_example_passes_the_models(example: Path):
    resource = yaml.safe_load(example.read_text())
    assert resource["apiVersion"] == f"{GROUP}/{VERSION}" and resource["kind"] == "ServiceChain"
    ServiceChainSpec.model_validate(resource["spec"])


def test_the_models_refuse_what_the_schema_cannot_express():
    # Exactly one of chains and sfc: no structural schema says so; the operator's models do, by name.
    with pytest.raises(ValueError, match="exactly one of them"):
        ServiceChainSpec.model_validate({})
    with pytest.raises(ValueError, match="exactly one of them"):
        ServiceChainSpec.model_validate(
            {
                "chains": [{"name": "c", "nfs": [{"name": "a", "type": "ttl"}]}],
                "sfc": {"vnfs": [{"name": "v", "template": "t"}]},
            }
        )
