"""A pydantic JSON Schema turned into the structural OpenAPI v3 schema a Kubernetes CRD must carry.

Kubernetes (apiextensions.k8s.io/v1) takes a subset of OpenAPI v3.0: no `$ref` (definitions are inlined), no
`const`, `nullable` instead of a null type, a boolean `exclusiveMinimum`, and a type on every node, never inside
`anyOf`. Unknown fields are not declared with `additionalProperties: false`: the API server rejects them under
`kubectl`'s strict field validation, naming them. A union of types that has no structural form (a rate that is a
number or "10kpps") keeps any value here; the operator validates the resource with the same pydantic models,
which name the field."""

from __future__ import annotations

# Keywords that describe a value and that a structural schema keeps as they are.
_KEPT = (
    "description",
    "enum",
    "format",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "pattern",
    "required",
    "uniqueItems",
)
ANY_VALUE = {"x-kubernetes-preserve-unknown-fields": True}


def structural(schema: dict, definitions: dict) -> dict:
    """The structural form of `schema`, whose `$ref`s point into `definitions` (pydantic's `$defs`)."""
    return _convert(schema, definitions, ())


def _convert(schema: dict, definitions: dict, seen: tuple[str, ...]) -> dict:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:  # a recursive type (JSON values) has no structural form
            return dict(ANY_VALUE)
        merged = {**definitions[name], **{k: v for k, v in schema.items() if k != "$ref"}}
        return _convert(merged, definitions, (*seen, name))
    if not schema:  # any JSON value
        return dict(ANY_VALUE)
    variants = schema.get("anyOf") or schema.get("oneOf")
    if variants:
        return _union(schema, variants, definitions, seen)
    result: dict = {}
    if "const" in schema:
        result["enum"] = [schema["const"]]
    kind = schema.get("type")
    if kind is None and "enum" in schema:
        kind = _enum_type(schema["enum"])
    if kind is not None:
        result["type"] = kind
    for key in _KEPT:
        if key in schema:
            result[key] = schema[key]
    if "exclusiveMinimum" in schema:
        result["minimum"], result["exclusiveMinimum"] = schema["exclusiveMinimum"], True
    if "exclusiveMaximum" in schema:
        result["maximum"], result["exclusiveMaximum"] = schema["exclusiveMaximum"], True
    if kind == "object":
        properties = schema.get("properties") or {}
        if properties:
            result["properties"] = {name: _convert(value, definitions, seen) for name, value in properties.items()}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):  # a map: its values' schema (false = unknown fields, left to the API server)
            result["additionalProperties"] = _convert(extra, definitions, seen) if extra else dict(ANY_VALUE)
        elif not properties and extra is not False:
            result.update(ANY_VALUE)
    if kind == "array" and "items" in schema:
        result["items"] = _convert(schema["items"], definitions, seen)
    return result


def _union(schema: dict, variants: list[dict], definitions: dict, seen: tuple[str, ...]) -> dict:
    """X or null -> X, nullable; int or string -> int-or-string; any other union -> any value."""
    concrete = [variant for variant in variants if variant.get("type") != "null"]
    nullable = len(concrete) < len(variants)
    outer = {key: schema[key] for key in ("description",) if key in schema}
    if len(concrete) == 1:
        result = _convert({**concrete[0], **outer}, definitions, seen)
    else:
        kinds = {_resolved(variant, definitions).get("type") for variant in concrete}
        if kinds == {"integer", "string"}:
            result = {"x-kubernetes-int-or-string": True, **outer}
        else:
            result = {**ANY_VALUE, **outer}
    if nullable:
        result["nullable"] = True
    return result


def _resolved(schema: dict, definitions: dict) -> dict:
    if "$ref" in schema:
        return definitions[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _enum_type(values: list) -> str | None:
    kinds = {type(value) for value in values}
    if kinds == {str}:
        return "string"
    if kinds <= {int} and bool not in kinds:
        return "integer"
    if kinds <= {int, float}:
        return "number"
    return None
