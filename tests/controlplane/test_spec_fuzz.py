"""The spec loader fuzzed with Hypothesis: generated documents, valid and broken, and broken files. Every one either
validates (exit 0) or exits 2 with a message that names the file (and the field, or the line of YAML, at fault),
never a traceback or an internal error, within a bounded time."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import REPO, tandem
from controlplane.cli import main as cli
from controlplane.spec import loading as spec_module
from controlplane.spec.limits import MAX_VALUES

BASE = {
    "name": "fuzz",
    "duration": 1,
    "warmup": 0.3,
    "burst": 32,
    "ring_capacity": 2048,
    "traffic": {"rate": "2 Mpps", "size": 64, "flows": 16, "protocol": "udp"},
    "scheduler": {"name": "coop", "options": {"k": 8}},
    "chains": [
        {
            "name": "c",
            "nfs": [
                {"name": "a", "type": "firewall", "core": 1, "args": {"synthetic_rules": 10}},
                {"name": "b", "type": "ttl", "core": 1},
            ],
        }
    ],
}
# Fields the documents may leave out, where the fuzzer puts wrong values too.
OPTIONAL = [
    ("name",),
    ("description",),
    ("duration",),
    ("warmup",),
    ("burst",),
    ("prefetch",),
    ("ring_capacity",),
    ("control_core",),
    ("placement",),
    ("placement_cores",),
    ("traffic",),
    ("traffic", "rate"),
    ("traffic", "rate_steps"),
    ("traffic", "step_seconds"),
    ("traffic", "size"),
    ("traffic", "flows"),
    ("traffic", "protocol"),
    ("scheduler",),
    ("scheduler", "name"),
    ("scheduler", "options"),
    ("scheduler", "options", "k"),
    ("scheduler_options",),
    ("chains",),
    ("chains", 0),
    ("chains", 0, "name"),
    ("chains", 0, "nfs"),
    ("chains", 0, "ring_capacity"),
    ("chains", 0, "weight"),
    ("chains", 0, "traffic"),
    ("chains", 0, "nfs", 0, "core"),
    ("chains", 0, "nfs", 0, "type"),
    ("chains", 0, "nfs", 0, "args"),
    ("chains", 0, "nfs", 0, "args", "synthetic_rules"),
    ("chains", 0, "nfs", 0, "weight"),
    ("chains", 0, "nfs", 0, "cost_cycles"),
    ("chains", 0, "nfs", 0, "batch"),
    ("chains", 0, "nfs", 1, "name"),
]
# The documents the fuzzer starts from: BASE and the examples that validate (testpmd-chain needs testpmd).
BASES = [BASE] + [
    yaml.safe_load((REPO / "examples" / f"{name}.yaml").read_text())
    for name in ("three-firewalls", "light-chain", "heterogeneous")
]


def every_path(value, prefix: tuple = ()):
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield (*prefix, key)
        yield from every_path(item, (*prefix, key))


def holds(document, path: tuple) -> bool:
    """Whether the mapping that `path` ends in is there."""
    for key in path[:-1]:
        if not isinstance(document, (dict, list)) or (
            key not in document if isinstance(document, dict) else key >= len(document)
        ):
            return False
        document = document[key]
    return isinstance(document, dict)


# (base, path): every place a value sits in each base, and the optional fields it leaves out.
STARTS = [
    (b, path)
    for b, base in enumerate(BASES)
    for path in dict.fromkeys([*every_path(base), *(path for path in OPTIONAL if holds(base, path))])
]
# A wrong top-level value can show where it broke another field: NFs on a control core that moved to theirs.
TOP_LEVEL_NEIGHBOURS = {"control_core": ("chains", "placement_cores")}
# One case takes 0.01-0.1 s here (most of it the data plane's --check), the slowest (5000 levels of nesting) ~1 s:
# 5 s is a hang, not a slow machine.
CASE_SECONDS = 5
# ~1200 generated cases, ~35 s on 2 cores; derandomized and without a database, so every run checks the same ones.
SETTINGS = settings(
    max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
counted = {"cases": 0, "valid": 0, "commands": 0}


@pytest.fixture(scope="module", autouse=True)
def report_count(request):
    yield
    with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print(
            f"\nspec fuzz: {counted['cases']} documents and files validated in process "
            f"({counted['valid']} valid, the rest "
            f"refused), {counted['commands']} by a separate command; none with a traceback or an internal error"
        )


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**18, max_value=10**40),
    st.floats(),
    st.sampled_from([float("inf"), float("nan"), 1e308, -0.0, 2**70, 2**63, -(2**63) - 1, 10**100]),
    st.text(max_size=30),
    st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x2FFFF), max_size=12),
    st.sampled_from(
        ["max", "1e400 Mpps", "-3 kpps", "datacenter", "tcp", "firewall", "bubble", "unis", "auto", "2018-01-01"]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
# Values only YAML text can give (safe_dump writes none of them): tags, dates, merge keys, aliases, \u escapes, numbers
# that PyYAML's constructors choke on.
YAML_ONLY = [
    "2018-01-01",
    "2018-13-45",
    "2001-12-14t21:59:43.10-05:00",
    "!!binary aGVsbG8=",
    "!!binary '!!!'",
    "!!set {a, b}",
    "!!float abc",
    "!!bool maybe",
    "!!int ''",
    "!!timestamp x",
    "1" * 5000,
    "-" + "9" * 400,
    ".inf",
    "-.inf",
    ".nan",
    "1.0e400",
    '"\\ud800"',
    '"\\udc00x"',
    '"\\ud83d\\ude00"',
    '"a\\0b"',
    "!!python/name:os.system",
    "!!python/object:os.system {}",
    "!!str {a: 1}",
    "!!map [1]",
    "!!set [1]",
    "!!omap [{a: 1}, {b: 2}]",
    "!!pairs [1]",
    "*nowhere",
    "&x [*x]",
    "&y {a: *y}",
    "{<<: 1}",
    "{<<: [1]}",
    "{<<: {k: 1}, k: 2}",
    "{a: 1, a: 2}",
    "{? [a]: b}",
    "0x_ff",
    "0o777",
    "0b101",
    "1_000",
    "1:20",
    "yes",
    "off",
    "~",
    "''",
    "!!null x",
    "!custom 1",
    "!<tag:yaml.org,2002:int> 12",
]


def validate(path: Path) -> tuple[int, str]:
    """`tandem validate PATH` in this process; the exit status and what it printed on stderr."""
    errors = io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(["validate", str(path)])
    assert time.monotonic() - started < CASE_SECONDS, f"validating {path} took {time.monotonic() - started:.1f} s"
    counted["cases"] += 1
    counted["valid"] += status == 0
    return status, errors.getvalue()


def field_of(path: tuple) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")


def assert_clean_verdict(
    path: Path, status: int, message: str, target: tuple | None = None, line: int | None = None
) -> None:
    """Exit 0, or 2 with every line naming the file. Given the `target` of a wrong value, every line names it or a
    field beside it (args given to a changed NF type, options to a changed scheduler), or is a duplicate of it; given
    the `line` it sits on, a YAML error names that line."""
    assert status in (0, 2), (status, message)
    # A Python traceback's own first line: a key the fuzzer drew may hold the bare word (Hypothesis draws the
    # test's own string constants).
    assert "Traceback (most recent call last)" not in message and "internal error" not in message, message
    if status != 2:
        return
    lines = message.splitlines()
    assert lines and all(each.startswith(f"{path}: ") for each in lines), message
    if target is None:
        return
    fields = [each[len(f"{path}: ") :] for each in lines]
    if line is not None and fields[0].startswith("malformed YAML: "):
        assert fields[0].startswith(f"malformed YAML: line {line}, "), message
        return
    # The data plane names a scheduler option scheduler.NAME, without 'options'.
    places = (
        ("scheduler",)
        if target[0] == "scheduler"
        else (field_of(target[:-1]),)
        if len(target) > 1
        else (target[0], *TOP_LEVEL_NEIGHBOURS.get(target[0], ()))
    )
    assert all(any(field.startswith(place) or f"(also {place}" in field for place in places) for field in fields), (
        places,
        message,
    )


def refused_half_pair(message: str, value) -> bool:
    """Whether the loader refused half a UTF-16 surrogate pair, which Hypothesis draws in text and safe_dump writes as a
    \\u escape: a YAML error at its line rather than at a field (and only where `value` has one)."""
    refused = "surrogate pair" in message
    assert not refused or re.search(r"[\ud800-\udfff]", json.dumps(value, ensure_ascii=False)), message
    return refused


def put(document: dict, path: tuple, value) -> None:
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def spec_file(tmp_path_factory, text: str | bytes) -> Path:
    spec = tmp_path_factory.mktemp("fuzz") / "spec.yaml"
    if isinstance(text, bytes):
        spec.write_bytes(text)
    else:
        spec.write_text(text, encoding="utf-8")
    return spec


@SETTINGS
@given(start=st.sampled_from(STARTS), value=values)
def test_a_wrong_value_anywhere_is_an_error_naming_its_field(tmp_path_factory, start, value):
    document, path = copy.deepcopy(BASES[start[0]]), start[1]
    put(document, path, value)
    spec = spec_file(tmp_path_factory, yaml.safe_dump(document, allow_unicode=True))
    status, message = validate(spec)
    assert_clean_verdict(spec, status, message, target=None if refused_half_pair(message, value) else path)


@SETTINGS
@given(start=st.sampled_from(STARTS), text=st.sampled_from(YAML_ONLY))
def test_a_value_only_yaml_has_is_an_error_at_its_field_or_line(tmp_path_factory, start, text):
    document, path = copy.deepcopy(BASES[start[0]]), start[1]
    put(document, path, "zzplaceholder")
    dumped = yaml.safe_dump(document)
    line = dumped[: dumped.index("zzplaceholder")].count("\n") + 1
    spec = spec_file(tmp_path_factory, dumped.replace("zzplaceholder", text))
    status, message = validate(spec)
    assert_clean_verdict(spec, status, message, target=path, line=line)


@SETTINGS
@given(start=st.sampled_from(STARTS), action=st.sampled_from(["drop", "unknown"]), key=st.text(min_size=1, max_size=10))
def test_missing_and_unknown_keys_are_named(tmp_path_factory, start, action, key):
    document, path = copy.deepcopy(BASES[start[0]]), start[1]
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    assume(isinstance(parent, dict))  # a key is dropped from, or added to, a mapping
    if action == "drop":
        parent.pop(path[-1], None)
    else:
        parent["zz" + key] = 1  # zz: never a real field's name
    spec = spec_file(tmp_path_factory, yaml.safe_dump(document, allow_unicode=True))
    status, message = validate(spec)
    if refused_half_pair(message, key):
        assert_clean_verdict(spec, status, message)
        return
    # The field dropped, or the one the unknown key went into; an unknown key at the top is named as given (below).
    assert_clean_verdict(
        spec, status, message, target=path if action == "drop" else (*path[:-1], "zz") if len(path) > 1 else None
    )
    if action == "unknown" and not {"args", "options", "scheduler_options"} & set(
        path[:-1]
    ):  # the data plane's own words there
        assert status == 2 and "unknown field" in message, message
    if action == "unknown" and status == 2:  # named (as given, or with its odd characters escaped)
        assert "zz" in message, message


yaml_pieces = st.sampled_from(
    [
        "chains:",
        "  - name: c",
        "    nfs: [{name: a, type: ttl, core: 1}]",
        "    nfs: [&n {name: a, type: ttl, core: 1}, {<<: *n, name: b}]",
        "name: &n x",
        "duration: *n",
        "a: &a [1, 2]",
        "b: &b [*a, *a, *a, *a]",
        "c: [*b, *b, *b, *b]",
        "chains: *a",
        "<<: *a",
        "<<: {burst: 64}",
        "[[[[[[[[",
        "{",
        "}",
        "- - - -",
        "? [a]: b",
        "!!python/object:os.system {}",
        "duration: !!binary aGVsbG8=",
        "burst: 0x400",
        "warmup: .nan",
        "ring_capacity: 1e999",
        "ring_capacity: 1.0e999",
        "name: name",
        "name: again",
        "\t",
        "%YAML 1.1",
        "%TAG !e! tag:example.com,2000:",
        "---",
        "...",
        "'unterminated",
        "control_core: -1",
        "traffic: {rate: 1e308 pps}",
        "\u00e9\u00e8: \u2603",
        "\x00",
        "\x07",
        "\ufeff",
        'description: "\\ud800"',
        "description: 2018-02-30",
        "burst: !!int x",
        "warmup: " + "7" * 4400,
    ]
)


@SETTINGS
@given(lines=st.lists(yaml_pieces, max_size=10), noise=st.text(max_size=40))
def test_raw_yaml_text_is_an_error_or_a_spec(tmp_path_factory, lines, noise):
    spec = spec_file(tmp_path_factory, "\n".join(lines) + "\n" + noise)
    status, message = validate(spec)
    assert_clean_verdict(spec, status, message)


def base_text() -> str:
    return yaml.safe_dump(BASE)


def with_line(after: str, line: str) -> str:
    """BASE as YAML with `line` added after the line that starts with `after` (stripped), at that line's indent."""
    lines = base_text().splitlines()
    at = next(i for i, each in enumerate(lines) if each.strip().startswith(after))
    indent = len(lines[at]) - len(lines[at].lstrip(" -"))
    return "\n".join(lines[: at + 1] + [" " * indent + line] + lines[at + 1 :]) + "\n"


# Billion laughs: nine levels, each listing the one before twelve times (12^9 leaves once expanded).
BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 12)}]\n" for i in range(9))
    + "chains: *j\n"
)

BROKEN = {
    "empty file": ("", "must be a YAML mapping"),
    "not UTF-8": (b"name: \xff\xfe\x00bad\n", "not UTF-8"),
    "a duplicate key": (base_text() + "burst: 64\n", "key 'burst' is given twice (first on line"),
    "a duplicate key beside a merge": (
        "chains: [{<<: {name: c}, name: d, name: e, nfs: []}]\n",
        "key 'name' is given twice",
    ),
    "an alias bomb": (BOMB, f"more than {MAX_VALUES} values"),
    "deep nesting": ("chains: " + "[" * 5000 + "]" * 5000 + "\n", "malformed YAML"),
    "deep nesting in NF args": (with_line("synthetic_rules", "x: " + "[" * 200 + "]" * 200), "chains[0].nfs[0].args.x"),
    "a list, not a mapping": ("- 1\n- 2\n", "must be a YAML mapping"),
    "a NUL character": (base_text() + "description: a\x00b\n", "character #x0000 is not allowed"),
    "a huge ring": (
        base_text().replace("ring_capacity: 2048", "ring_capacity: 1180591620717411303424"),
        "ring_capacity: ",
    ),
    "an infinite rate": (base_text().replace("rate: 2 Mpps", "rate: .inf"), "traffic.rate: "),
    "a huge rate": (base_text().replace("rate: 2 Mpps", "rate: 1e308 pps"), "traffic.rate: "),
    "an infinite weight": (with_line("name: a", "weight: .inf"), "chains[0].nfs[0].weight: "),
    "size weights whose sum is inf": (
        base_text().replace("size: 64", "size: [{size: 64, weight: 1.0e308}, {size: 128, weight: 1.0e308}]"),
        "traffic.size[0].weight: ",
    ),
    "a step of no TSC cycles": (
        base_text().replace("rate: 2 Mpps", "rate_steps: [0, 1 Mpps]\n  step_seconds: 1.0e-300"),
        "traffic.step_seconds: ",
    ),
    "month 13": (base_text() + "description: 2018-13-45\n", "not a valid timestamp: month must be in 1..12"),
    "a 5000-digit number": (
        base_text().replace("burst: 32", "burst: " + "3" * 5000),
        "not a valid int: Exceeds the limit",
    ),
    "!!bool maybe": (base_text().replace("burst: 32", "burst: !!bool maybe"), "not a valid bool"),
    "half a surrogate pair": (base_text() + 'description: "\\ud800"\n', "half a UTF-16 surrogate pair"),
    "a date among NF args": (
        base_text().replace("synthetic_rules: 10", "synthetic_rules: 2018-01-01"),
        "chains[0].nfs[0].args.synthetic_rules: must be a number, text",
    ),
    "binary data among NF args": (
        base_text().replace("synthetic_rules: 10", "synthetic_rules: !!binary aGVsbG8="),
        "chains[0].nfs[0].args.synthetic_rules: must be a number, text",
    ),
    "inf among scheduler options": (base_text().replace("k: 8", "k: .inf"), "scheduler.options.k: "),
    "nan among another scheduler's options": (
        base_text() + "scheduler_options: {unis: {gamma: .nan}}\n",
        "scheduler_options.unis.gamma: ",
    ),
    "a number as an NF argument's name": (
        base_text().replace("synthetic_rules: 10", "1: 10"),
        "chains[0].nfs[0].args[1]: a key must be text",
    ),
    "a number as a field's name": (base_text() + "1.5: x\n", "['1.5']: a key must be text"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_documents_exit_2_naming_the_file(case, tmp_path_factory):
    text, expected = BROKEN[case]
    spec = spec_file(tmp_path_factory, text)
    status, message = validate(spec)
    assert status == 2, message
    assert_clean_verdict(spec, status, message)
    assert expected in message, message


def test_a_document_longer_than_a_spec_needs_is_refused_early(tmp_path_factory, monkeypatch):
    # 3 MB of numbers, under the size limit, that PyYAML would take a minute to read whole. Reading up to the real
    # MAX_VALUES takes ~2 s here; a lower cap checks the same rule in a tenth of that.
    monkeypatch.setattr(spec_module, "MAX_VALUES", 5000)
    spec = spec_file(tmp_path_factory, base_text() + "description: [" + "1, " * 10**6 + "1]\n")
    status, message = validate(spec)
    assert (
        status == 2 and message.startswith(f"{spec}: malformed YAML: line ") and "more than 5000 values" in message
    ), message


def nf_defaults_spec(chains: int, nfs: int) -> str:
    """Chains of NFs that take their type and core from the first NF's by a merge key (`<<: *nf`): an alias each."""
    lines = ["scheduler: coop", "chains:"]
    for c in range(chains):
        lines += [f"  - name: c{c}", "    nfs:"]
        lines += [
            f"      - {{<<: *nf, name: n{c}_{n}}}"
            if (c, n) != (0, 0)
            else "      - &nf {name: n0_0, type: ttl, core: 1}"
            for n in range(nfs)
        ]
    return "\n".join(lines) + "\n"


VALID = {
    "merge keys on 120 NFs": nf_defaults_spec(6, 20),
    "a surrogate pair escape, as JSON writes one": json.dumps(dict(BASE, description="\U0001f600")),
    "a key beside a merge overriding it": "chains: [{<<: {name: x, nfs: []}, "
    "name: c, nfs: [{name: a, type: ttl, core: 1}]}]\n",
}


@pytest.mark.parametrize("case", sorted(VALID))
def test_valid_documents_validate(case, tmp_path_factory):
    spec = spec_file(tmp_path_factory, VALID[case])
    status, message = validate(spec)
    assert status == 0, message


def test_files_that_are_not_specs(tmp_path):
    large = tmp_path / "large.yaml"
    large.write_text(base_text() + "#" * (11 << 20))
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)  # reading a pipe with no writer would wait forever
    for path, expected in [
        (tmp_path, "not a regular file"),
        (tmp_path / "missing.yaml", "no such file"),
        (large, "specs are at most 10 MB"),
        (pipe, "not a regular file"),
        (Path("/dev/zero"), "not a regular file"),
    ]:
        status, message = validate(path)
        assert status == 2 and message.startswith(f"{path}: ") and expected in message, message


def unprivileged_prefix() -> list[str] | None:
    """A command prefix that runs what follows as an unprivileged user able to run this Python; None if none can."""
    if os.geteuid() != 0:
        return []
    for prefix in (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"], ["runuser", "-u", "nobody", "--"]):
        if (
            shutil.which(prefix[0])
            and subprocess.run(
                [*prefix, sys.executable, "-c", "import pydantic, yaml"], capture_output=True, timeout=60
            ).returncode
            == 0
        ):
            return prefix
    return None


def test_an_unreadable_file(tmp_path):
    prefix = unprivileged_prefix()
    if prefix is None:
        pytest.skip("root reads any file, and neither setpriv nor runuser runs this Python as an unprivileged user")
    # In a directory of its own that anyone may pass through (pytest's are root's alone), readable by no one.
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, stat.S_IRWXU | stat.S_IXGRP | stat.S_IXOTH)
        spec = Path(folder) / "spec.yaml"
        spec.write_text(base_text())
        spec.chmod(0)
        result = subprocess.run(
            [*prefix, sys.executable, "-m", "controlplane", "validate", str(spec)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
        )
    counted["commands"] += 1
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"{spec}: cannot read the spec: Permission denied\n", result.stderr


def test_the_real_command_exits_2_on_a_few_broken_specs(tmp_path_factory):
    cases = [
        "a duplicate key",
        "an alias bomb",
        "not UTF-8",
        "an infinite rate",
        "month 13",
        "half a surrogate pair",
        "a date among NF args",
    ]
    for name in cases:
        spec = spec_file(tmp_path_factory, BROKEN[name][0])
        result = tandem("validate", str(spec), timeout=60)
        counted["commands"] += 1
        assert result.returncode == 2 and result.stderr.startswith(f"{spec}: "), (name, result.stderr)
        assert "Traceback" not in result.stderr and BROKEN[name][1] in result.stderr, (name, result.stderr)
    spec = spec_file(tmp_path_factory, VALID["merge keys on 120 NFs"])
    result = tandem("validate", str(spec), timeout=60)
    counted["commands"] += 1
    assert result.returncode == 0 and re.search(r"valid: 6 chain\(s\), 120 NF\(s\)", result.stdout), (
        result.stdout + result.stderr
    )
