"""The data plane's layers point one way: no C++ include reaches a layer above its own, and sibling folders of one
layer (NFs, schedulers) stay apart.

Run alone with: .venv/bin/python -m pytest tests/architecture -q"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from conftest import REPO

# Data-plane folders, bottom first. A file may include its own folder's files and any lower layer's; folders that
# share a layer are siblings and include nothing of each other. Tests (TEST_FILE) are held to the same rule as the
# code beside them: an NF's test reaches packets' helpers, not the manager's run or traffic.
CPP_LAYERS = [
    ["contract"],  # the deployment model, shared memory, batches, a packet's record
    ["dataplane/packets"],  # a frame's bytes: IPv4 views, 5-tuple, frames built
    ["nfs", "dataplane/ports", "schedulers/mechanisms"],  # what runs packets, what moves them, the ways to move the CPU
    ["schedulers", "dataplane/runtimes"],  # scheduler modules (policies over mechanisms); how a worker runs
    ["catalog"],  # the registered NFs and schedulers, and a deployment's checks
    ["dataplane/traffic", "dataplane/sink"],  # the manager's generator and sink
    ["dataplane/observation"],  # counters, and probes hooked into generator and sink
    ["dataplane/run", "dataplane/worker"],  # the two processes: the manager's run of a deployment, the worker
    ["tools/primitives", "tools/graph_eval", "bench", "tests/fuzz"],  # programs beside the data plane, fuzz targets
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TEST_FILE = re.compile(r"(_test\.cc|_test_support\.h|_test_main\.cc)$")
# The one thing a test may include from above its layer: the EAL without hugepages and frames in mbufs, which tests of
# every layer use (contract's wire_meta_test, below packets, among them).
TEST_HARNESS = Path("dataplane/packets/packet_test_support.h")


def cpp_folder(path: Path) -> str | None:
    """The layer folder `path` (relative to the repository) sits in, the deepest that holds it; or None."""
    holding = [
        folder
        for layer in CPP_LAYERS
        for folder in layer
        if path.parts[: len(Path(folder).parts)] == Path(folder).parts
    ]
    return max(holding, key=lambda folder: len(Path(folder).parts), default=None)


def cpp_rank(folder: str) -> int:
    return next(rank for rank, layer in enumerate(CPP_LAYERS) if folder in layer)


def cpp_sources() -> list[Path]:
    roots = {Path(folder).parts[0] for layer in CPP_LAYERS for folder in layer}
    return sorted(
        path.relative_to(REPO) for root in roots for path in (REPO / root).rglob("*") if path.suffix in (".h", ".cc")
    )


def included(source: Path, name: str) -> Path:
    """What `#include "name"` in `source` names: beside the source first, as the compiler looks, else from the root."""
    beside = source.parent / name
    return beside if (REPO / beside).exists() else Path(name)


def cpp_violations() -> list[str]:
    found = []
    for source in cpp_sources():
        here = cpp_folder(source)
        if here is None:
            found.append(f"{source}: in no layer (add its folder to CPP_LAYERS)")
            continue
        for name in INCLUDE.findall((REPO / source).read_text()):
            target = included(source, name)
            if target == TEST_HARNESS and TEST_FILE.search(source.name):
                continue
            there = cpp_folder(target)
            if there is None or there == here:
                continue
            if cpp_rank(there) > cpp_rank(here):
                found.append(f"{source} includes {name}: {there} is a layer above {here}")
            elif cpp_rank(there) == cpp_rank(here):
                found.append(f"{source} includes {name}: {here} and {there} are siblings")
    return found


def test_no_include_points_upward_or_sideways():
    assert len(cpp_sources()) > 50  # the walk found the data plane
    assert cpp_violations() == []


def test_the_check_sees_an_upward_or_sideways_include(monkeypatch):
    # The check reads the real tree: a contract header that includes an NF, a mechanism that includes a scheduler
    # module, an NF that includes a mechanism, and tests that include above their layer must each be caught.
    for path, include, violation in [
        ("contract/x.h", "nfs/nf.h", "nfs is a layer above contract"),
        (
            "schedulers/mechanisms/x.h",
            "schedulers/unis/wait_queue.h",
            "schedulers is a layer above schedulers/mechanisms",
        ),
        ("nfs/x.h", "schedulers/mechanisms/kernel_policy.h", "nfs and schedulers/mechanisms are siblings"),
        # Tests too: an NF's test that reaches the manager's traffic, a contract test that takes the NFs' support.
        ("nfs/x_test.cc", "dataplane/traffic/generator.h", "dataplane/traffic is a layer above nfs"),
        ("contract/x_test.cc", "nfs/nf_test_support.h", "nfs is a layer above contract"),
    ]:
        found = _violations_with(Path(path), f'#include "{include}"\n', monkeypatch)
        assert f"{Path(path)} includes {include}: {violation}" in found, found


def test_any_test_may_include_the_test_harness_and_only_a_test(monkeypatch):
    include = f'#include "{TEST_HARNESS}"\n'
    assert _violations_with(Path("contract/x_test.cc"), include, monkeypatch) == []
    assert f"contract/x.h includes {TEST_HARNESS}: dataplane/packets is a layer above contract" in _violations_with(
        Path("contract/x.h"), include, monkeypatch
    )


def _violations_with(path: Path, text: str, monkeypatch) -> list[str]:
    real_sources, real_read = cpp_sources(), Path.read_text
    monkeypatch.setattr(sys.modules[__name__], "cpp_sources", lambda: [*real_sources, path])
    monkeypatch.setattr(
        Path, "read_text", lambda self, *a, **k: text if self == REPO / path else real_read(self, *a, **k)
    )
    return cpp_violations()
