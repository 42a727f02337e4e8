"""Reading a spec: strict YAML, pydantic's complaints as located problems, then the semantic checks."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from pydantic import ValidationError

from controlplane.errors import SpecError
from controlplane.spec.checks import semantic_problems
from controlplane.spec.limits import MAX_SPEC_BYTES, MAX_VALUES
from controlplane.spec.models import Spec
from controlplane.spec.ports import IDLE_LAB

_SURROGATE = re.compile(r"[\ud800-\udfff]")

# Pydantic names the branch of a union that failed ("float", "list[SizeWeight]", "function-after[...]");
# spec fields are lower-case words, so anything else in a location is such a name and is left out.
_FIELD_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_TYPE_NAMES = {"str", "float", "int", "bool", "list", "dict"}
# A key that is no field is quoted back only where it reads as a name someone could have meant as one: the rest of a
# file's text (a password file given by mistake, or specs that arrive from others) is never echoed in an error.
_QUOTABLE_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _key_location(parent: str, key) -> str:
    if isinstance(key, str) and _FIELD_NAME.match(key):
        return f"{parent}.{key}" if parent else key
    if not isinstance(key, str) or _QUOTABLE_KEY.match(key):
        return f"{parent}[{key!r}]"
    return f"{parent}[a key of {len(key)} characters, not quoted]"


def _location(loc: tuple) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _FIELD_NAME.match(str(part)) and part not in _TYPE_NAMES:
            path += ("." if path else "") + str(part)
    return path


def pydantic_problems(error: ValidationError) -> list[tuple[str, str]]:
    problems: dict[str, str] = {}
    for item in error.errors():
        loc = item["loc"]
        path = _location(loc)
        message = item["msg"].removeprefix("Value error, ")
        bad_key = loc[-1:] == ("[key]",)  # pydantic's mark for a key (not its value) of the wrong type
        if item["type"] in ("extra_forbidden", "invalid_key") or bad_key:
            # The key is the user's own text, not a union branch: named whatever it looks like.
            path = _key_location(_location(loc[: -2 if bad_key else -1]), loc[-2 if bad_key else -1])
            message = (
                "unknown field"
                if item["type"] == "extra_forbidden"
                else "a key must be text (quote one that reads as a number, true/false or null)"
            )
        elif item["type"] == "missing":
            message = "is required"
        elif item["type"] == "invalid-json-value":  # what YAML has and JSON lacks, in NF args and scheduler options
            kind = type(item["input"]).__name__
            message = f"must be a number, text, true/false, null, a list or a mapping, not a {kind}" + (
                " (quote it to give it as text)" if kind in ("date", "datetime") else ""
            )
        problems.setdefault(path, message)  # a union reports once per branch; the first says enough
    # Where a union's branch got inside the value (a list of sizes), the other branches' complaints about the whole
    # ("should be a valid integer") miss the point.
    inside = {path[:i] for path in problems for i, char in enumerate(path) if char in ".["}
    return [(path, message) for path, message in problems.items() if path not in inside]


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader, stricter where a spec needs it: a key given twice is an error (PyYAML keeps the last
    silently), a document of more than MAX_VALUES values is refused, text must be valid Unicode, and a scalar that
    PyYAML's constructors fail on with Python's own errors is a YAML error at its place."""

    def __init__(self, stream):
        super().__init__(stream)
        self.values = 0
        self.anchor_values: dict[str, int] = {}  # anchor -> values it stands for, aliases inside it expanded

    def compose_node(self, parent, index):
        event = self.peek_event()
        alias = isinstance(event, yaml.AliasEvent)
        start = self.values
        self.values += self.anchor_values.get(event.anchor, 1) if alias else 1
        if self.values > MAX_VALUES:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"more than {MAX_VALUES} values, each alias (*name) counted as its anchor's: refused, "
                "a spec needs far fewer",
                event.start_mark,
            )
        node = super().compose_node(parent, index)
        if not alias and event.anchor is not None:
            self.anchor_values[event.anchor] = self.values - start
        return node

    def construct_object(self, node, deep=False):
        try:
            return super().construct_object(node, deep)
        except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError) as error:
            # A 5000-digit number, month 13 in a date, `!!bool maybe`, `!!int ''`: PyYAML fails on each with Python's
            # own error. A ValueError's text says what is wrong (up to its advice for programmers, after a ';').
            detail = f": {str(error).partition(';')[0]}" if isinstance(error, ValueError) else ""
            raise yaml.constructor.ConstructorError(
                None, None, f"not a valid {node.tag.rpartition(':')[2]}{detail}", node.start_mark
            ) from None

    def construct_scalar(self, node):
        value = super().construct_scalar(node)
        if _SURROGATE.search(value):
            # Only "\uD83D\uDE00" escapes make these: a UTF-16 pair is joined into its character; half a pair has
            # no UTF-8 (nor JSON for the data plane).
            try:
                value = value.encode("utf-16", "surrogatepass").decode("utf-16")
            except UnicodeDecodeError:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    "a \\u escape gives half a UTF-16 surrogate pair: write the character, or \\U and 8 digits",
                    node.start_mark,
                ) from None
        return value

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *defaults`: keys given beside a merge override the merged ones, as YAML intends
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None,
                            None,
                            f"key {key!r} is given twice (first on line {seen[key] + 1})",
                            key_node.start_mark,
                        )
                    seen[key] = key_node.start_mark.line
                except TypeError:
                    pass  # an unhashable key: the base class says so
        return super().construct_mapping(node, deep)  # which refuses a node that is not a mapping


def read_text(path: Path, source: str, what: str = "the spec") -> str:
    """The text of a file a user gave, or a SpecError naming the file and saying what it was to be (`what`)."""
    try:
        if not path.is_file():
            problem = "no such file" if not path.exists() else "not a regular file (a directory, a pipe, a device)"
            raise SpecError(source, [("", f"cannot read {what}: {problem}")])
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(
                source, [("", f"{what} is {size / 2**20:.1f} MB; specs are at most {MAX_SPEC_BYTES >> 20} MB")]
            )
        return path.read_bytes().decode("utf-8")
    except OSError as error:
        raise SpecError(source, [("", f"cannot read {what}: {error.strerror or error}")]) from None
    except UnicodeDecodeError as error:
        raise SpecError(
            source, [("", f"{what} is not UTF-8 text (byte {error.start} is 0x{error.object[error.start]:02x})")]
        ) from None


def parse_yaml(text: str, source: str):
    try:
        return yaml.load(text, Loader=_SpecLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.reader.ReaderError as error:  # its text spans two lines and counts characters, not lines
        line = text.count("\n", 0, error.position) + 1
        column = error.position - text.rfind("\n", 0, error.position)
        raise SpecError(
            source,
            [("", f"malformed YAML: line {line}, column {column}: character #x{error.character:04x} is not allowed")],
        ) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(source, [("", f"malformed YAML: {where}{getattr(error, 'problem', None) or error}")]) from None
    except RecursionError:
        raise SpecError(source, [("", "malformed YAML: nested too deeply")]) from None


def load_spec(path: str | Path) -> Spec:
    """Reads and checks a spec; raises SpecError naming the file and every bad field."""
    source = str(path)
    document = parse_yaml(read_text(Path(path), source), source)
    if not isinstance(document, dict):
        raise SpecError(source, [("", "the spec must be a YAML mapping with at least 'chains'")])
    return spec_from_document(document, path)


def spec_from_document(document: dict, path: str | Path, *, service: bool = False) -> Spec:
    """Checks a spec's document (read from `path`, against which relative files resolve); raises SpecError. A
    `service`'s lab may wait for the chains added to it live."""
    source = str(path)
    if document and not any(key in Spec.model_fields for key in document if isinstance(key, str)):
        raise SpecError(
            source,
            [
                (
                    "",
                    f"not a Tandem spec: none of its {len(document)} top-level keys is a field of one (a spec "
                    "has at least 'chains')",
                )
            ],
        )
    try:
        spec = Spec.model_validate(document)
    except ValidationError as error:
        raise SpecError(source, pydantic_problems(error)) from None
    except RecursionError:
        raise SpecError(source, [("", "a value is nested too deeply")]) from None
    for block in [spec.traffic] + [chain.traffic for chain in spec.chains]:
        if block.pcap is not None:
            block.pcap = str((Path(path).parent / block.pcap).resolve())
    if spec.lab is not None:  # the lab's commands run in the spec's folder, where its files are
        spec.lab.directory = str((Path(path).parent / (spec.lab.directory or ".")).resolve())
    problems = [problem for problem in semantic_problems(spec) if not (service and problem == IDLE_LAB)]
    if problems:
        raise SpecError(source, problems)
    return spec
