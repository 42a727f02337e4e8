"""The spec loader fuzzed with Hypothesis: generated documents, valid and broken, and broken files. Every one either
validates (exit 0) or exits 2 with a message that names the file (and a field, where a field is at fault), never a
traceback or an internal error, within a bounded time."""
from __future__ import annotations

import contextlib
import copy
import io
import os
import re
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import tandem
from controlplane import cli

BASE = {
    "name": "fuzz", "duration": 1, "warmup": 0.3, "burst": 32, "ring_capacity": 2048,
    "traffic": {"rate": "2 Mpps", "size": 64, "flows": 16, "protocol": "udp"},
    "scheduler": {"name": "coop", "options": {"k": 8}},
    "chains": [{"name": "c", "nfs": [{"name": "a", "type": "firewall", "core": 1, "args": {"synthetic_rules": 10}},
                                     {"name": "b", "type": "ttl", "core": 1}]}],
}
# Every place a value sits in BASE: where the fuzzer puts wrong ones.
PATHS = [("name",), ("duration",), ("warmup",), ("burst",), ("ring_capacity",), ("traffic",), ("traffic", "rate"),
         ("traffic", "size"), ("traffic", "flows"), ("traffic", "protocol"), ("scheduler",), ("scheduler", "name"),
         ("scheduler", "options"), ("scheduler", "options", "k"), ("chains",), ("chains", 0), ("chains", 0, "name"),
         ("chains", 0, "nfs"), ("chains", 0, "nfs", 0, "core"), ("chains", 0, "nfs", 0, "type"),
         ("chains", 0, "nfs", 0, "args"), ("chains", 0, "nfs", 0, "args", "synthetic_rules"), ("chains", 0, "nfs", 1, "name")]
# A validation that takes longer than this is a hang, not a slow machine: one takes ~0.1 s here (50x margin).
CASE_SECONDS = 5
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
counted = {"cases": 0}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**18, max_value=10**40), st.floats(),
    st.sampled_from([float("inf"), float("nan"), 1e308, -0.0, 2**70]), st.text(max_size=30),
    st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x2FFFF), max_size=12),
    st.sampled_from(["max", "1e400 Mpps", "-3 kpps", "datacenter", "tcp", "firewall", "bubble", "2018-01-01"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)


def validate(path: Path) -> tuple[int, str]:
    """`tandem validate PATH` in this process; the exit status and what it printed on stderr."""
    errors = io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(["validate", str(path)])
    assert time.monotonic() - started < CASE_SECONDS, f"validating {path} took {time.monotonic() - started:.1f} s"
    counted["cases"] += 1
    return status, errors.getvalue()


def assert_clean_verdict(path: Path, status: int, message: str, field: str | None = None) -> None:
    assert status in (0, 2), (status, message)
    assert "Traceback" not in message and "internal error" not in message, message
    if status == 2:
        assert message.startswith(f"{path}: "), message
        if field is not None:
            # The field at fault, or one the wrong value made inconsistent (a control core that the NFs sit on).
            named = re.findall(rf"^{re.escape(str(path))}: (\S[^\n]*?): ", message, re.M)
            assert named, message


def put(document: dict, path: tuple, value) -> None:
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


@SETTINGS
@given(path=st.sampled_from(PATHS), value=values)
def test_a_wrong_value_anywhere_is_an_error_naming_a_field(tmp_path_factory, path, value):
    document = copy.deepcopy(BASE)
    put(document, path, value)
    spec = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    spec.write_text(yaml.safe_dump(document, allow_unicode=True))
    status, message = validate(spec)
    assert_clean_verdict(spec, status, message, field=".".join(map(str, path)))


@SETTINGS
@given(path=st.sampled_from(PATHS), action=st.sampled_from(["drop", "unknown"]), key=st.text(min_size=1, max_size=10))
def test_missing_and_unknown_keys_are_named(tmp_path_factory, path, action, key):
    document = copy.deepcopy(BASE)
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    added = action == "unknown" and isinstance(parent, dict)
    if action == "drop":
        del parent[path[-1]]
    elif added:
        parent["zz" + key] = 1  # zz: never a real field's name
    spec = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    spec.write_text(yaml.safe_dump(document, allow_unicode=True))
    status, message = validate(spec)
    assert_clean_verdict(spec, status, message, field="zz" if added else None)
    if added and parent is not document["scheduler"]["options"] and "args" not in path:
        assert status == 2 and "unknown field" in message, message


yaml_pieces = st.sampled_from([
    "chains:", "  - name: c", "    nfs: [{name: a, type: ttl, core: 1}]", "name: &n x", "duration: *n", "a: &a [1, 2]",
    "b: &b [*a, *a, *a, *a]", "c: [*b, *b, *b, *b]", "chains: *a", "[[[[[[[[", "{", "}", "- - - -", "? [a]: b", "!!python/object:os.system {}",
    "duration: !!binary aGVsbG8=", "burst: 0x400", "warmup: .nan", "ring_capacity: 1e999", "name: name", "name: again", "\t", "%YAML 1.1",
    "---", "...", "'unterminated", "control_core: -1", "traffic: {rate: 1e308 pps}", "\u00e9\u00e8: \u2603", "\x00"])


@SETTINGS
@given(lines=st.lists(yaml_pieces, max_size=10), noise=st.text(max_size=40))
def test_raw_yaml_text_is_an_error_or_a_spec(tmp_path_factory, lines, noise):
    spec = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    spec.write_text("\n".join(lines) + "\n" + noise, encoding="utf-8")
    status, message = validate(spec)
    assert_clean_verdict(spec, status, message)


def written(tmp_path: Path, text: str | bytes) -> Path:
    spec = tmp_path / "spec.yaml"
    if isinstance(text, bytes):
        spec.write_bytes(text)
    else:
        spec.write_text(text)
    return spec


def base_text() -> str:
    return yaml.safe_dump(BASE)


# Billion laughs: nine levels, each listing the one before twelve times (12^9 leaves once expanded).
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 12)}]\n" for i in range(9)) + "chains: *j\n"

BROKEN = {
    "empty file": ("", "must be a YAML mapping"),
    "not UTF-8": (b"name: \xff\xfe\x00bad\n", "not UTF-8"),
    "a duplicate key": (base_text() + "burst: 64\n", "given twice"),
    "an alias bomb": (BOMB, "aliases"),
    "deep nesting": ("chains: " + "[" * 5000 + "]" * 5000 + "\n", "malformed YAML"),
    "a list, not a mapping": ("- 1\n- 2\n", "must be a YAML mapping"),
    "a huge ring": (base_text().replace("ring_capacity: 2048", "ring_capacity: 1180591620717411303424"), "ring_capacity"),
    "an infinite rate": (base_text().replace("rate: 2 Mpps", "rate: .inf"), "traffic.rate"),
    "a huge rate": (base_text().replace("rate: 2 Mpps", "rate: 1e308 pps"), "traffic.rate"),
    "an infinite weight": (base_text().replace("name: a", "name: a\n    weight: .inf"), "weight"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_documents_exit_2_naming_the_file(case, tmp_path):
    text, expected = BROKEN[case]
    spec = written(tmp_path, text)
    status, message = validate(spec)
    assert status == 2, message
    assert_clean_verdict(spec, status, message)
    assert expected in message, message


def test_files_that_are_not_specs(tmp_path, monkeypatch):
    large = tmp_path / "large.yaml"
    large.write_text(base_text() + "#" * (11 << 20))
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)  # reading a pipe with no writer would wait forever
    for path, expected in [(tmp_path, "not a regular file"), (tmp_path / "missing.yaml", "no such file"),
                           (large, "at most 10 MB"), (pipe, "not a regular file")]:
        status, message = validate(path)
        assert status == 2 and message.startswith(f"{path}: ") and expected in message, message
    unreadable = written(tmp_path, base_text())

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    # We run as root, who reads any file: an unreadable one is simulated where the loader reads it.
    monkeypatch.setattr(Path, "read_bytes", refuse)
    status, message = validate(unreadable)
    assert status == 2 and "Permission denied" in message, message


def test_the_real_command_exits_2_on_a_few_broken_specs(tmp_path):
    for name in ("a duplicate key", "an alias bomb", "not UTF-8", "an infinite rate"):
        spec = written(tmp_path, BROKEN[name][0])
        result = tandem("validate", str(spec), timeout=60)
        assert result.returncode == 2 and result.stderr.startswith(f"{spec}: "), (name, result.stderr)
        assert "Traceback" not in result.stderr


def test_report_how_many_cases_ran(capsys):
    # Runs last in this file (pytest keeps the file's order): the count covers the generated cases above.
    with capsys.disabled():
        print(f"\nspec fuzz: {counted['cases']} documents and files validated, none with a traceback")
    assert counted["cases"] >= 3 * SETTINGS.max_examples
