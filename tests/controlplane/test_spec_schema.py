"""The committed JSON Schema (schema/tandem.schema.json) is the one the models generate, every example validates
against it, and it refuses what the models refuse, so an editor's checks agree with Tandem's."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from conftest import REPO, tandem
from controlplane.sfc.schema import SCHEMA_PATH, schema_text

VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


def test_the_committed_schema_is_what_the_models_generate():
    assert SCHEMA_PATH.read_text() == schema_text(), (
        "the schema drifted from the models: ./tandem schema --out schema/tandem.schema.json"
    )
    printed = tandem("schema")
    assert printed.returncode == 0 and printed.stdout == schema_text()


@pytest.mark.parametrize("example", sorted((REPO / "examples").glob("*.yaml")), ids=lambda path: path.name)
def test_every_example_validates_against_the_schema_and_points_editors_to_it(example):
    text = example.read_text()
    assert text.startswith("# yaml-language-server: $schema=../schema/tandem.schema.json\n")
    errors = [error.message for error in VALIDATOR.iter_errors(yaml.safe_load(text))]
    assert errors == []


@pytest.mark.parametrize(
    "document",
    [
        {"chains": [{"name": "c", "nfs": [{"name": "a", "type": "ttl", "core": 1}]}], "burst": "many"},
        {"chains": [{"name": "c", "nfs": [{"name": "a", "type": "ttl", "core": 1, "colour": "red"}]}]},
        {"sfc": {"vnfs": [{"name": "x", "template": "router"}], "core": 1, "parallel": "sometimes"}},
        {"name": "no chains nor sfc"},
    ],
)
def test_the_schema_refuses_what_the_models_refuse(document):
    assert not VALIDATOR.is_valid(document)
