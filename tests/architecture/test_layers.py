"""The layers point one way: no C++ include and no Python import reaches a layer above its own, sibling folders of
one layer (NFs, schedulers) stay apart, and the control plane has no import cycle. Imports inside functions count.

Run alone with: .venv/bin/python -m pytest tests/architecture -q"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from conftest import REPO

# Data-plane folders, bottom first. A file may include its own folder's files and any lower layer's; folders that
# share a layer are siblings and include nothing of each other.
CPP_LAYERS = [
    ["contract"],                                 # the deployment model, shared memory, batches, packet metadata
    ["nfs", "dataplane/ports", "schedulers/mechanisms"],  # what runs packets, what moves them, the ways to move the CPU
    ["schedulers", "dataplane/runtimes"],         # scheduler modules (policies over mechanisms); how a worker runs
    ["catalog"],                                  # the registered NFs and schedulers, and a deployment's checks
    ["dataplane/manager", "dataplane/worker", "dataplane/primitives"],  # the two processes; the primitive-latency tool
]
# Control-plane modules, bottom first. Modules of one layer may import each other, without a cycle.
PYTHON_LAYERS = [
    ["errors", "spec", "chain_graph", "http_traffic", "pcap_file", "catalog", "robust_estimate",
     "results_model"],   # the contract: spec model, the data plane's catalog
    ["machine", "ovs_switch", "kernel_links", "machine_resources", "leftovers", "stall_diagnosis", "progress", "report", "plot",  # machine changes, what the user reads
     "vnf_templates", "sfc", "compose", "graph_drawing", "request", "spec_schema",  # SFC requests, the schema
     "live_metrics", "explain", "primitive_latencies", "time_explained"],                                   # live metrics for Prometheus
    ["runner"],                                         # one launch of the data plane
    ["profile", "batch_model", "rate_shares", "placement", "spare_cores"],  # costs and rate shares measured by launches, placement from them
    ["pipeline", "compare"],                            # validate -> place -> cost -> launch; repeated runs
    ["api", "cli", "__main__"],                         # the Python API (tandem.py) and the command line on it
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TEST_FILE = re.compile(r"(_test\.cc|_test_support\.h|_test_main\.cc)$")


def cpp_folder(path: Path) -> str | None:
    """The layer folder `path` (relative to the repository) sits in, the deepest that holds it; or None."""
    holding = [folder for layer in CPP_LAYERS for folder in layer if path.parts[:len(Path(folder).parts)] == Path(folder).parts]
    return max(holding, key=lambda folder: len(Path(folder).parts), default=None)


def cpp_rank(folder: str) -> int:
    return next(rank for rank, layer in enumerate(CPP_LAYERS) if folder in layer)


def cpp_sources() -> list[Path]:
    roots = {Path(folder).parts[0] for layer in CPP_LAYERS for folder in layer}
    return sorted(path.relative_to(REPO) for root in roots for path in (REPO / root).rglob("*")
                  if path.suffix in (".h", ".cc") and not TEST_FILE.search(path.name))


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
            there = cpp_folder(target)
            if there is None or there == here:
                continue
            if cpp_rank(there) > cpp_rank(here):
                found.append(f"{source} includes {name}: {there} is a layer above {here}")
            elif cpp_rank(there) == cpp_rank(here):
                found.append(f"{source} includes {name}: {here} and {there} are siblings")
    return found


def python_imports(module: Path) -> set[str]:
    """The controlplane modules that `module` imports, wherever in it the import statement sits."""
    names = set()
    for node in ast.walk(ast.parse(module.read_text(), str(module))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)  # from controlplane import runner
    return {name.split(".")[1] for name in names
            if name.startswith("controlplane.") and (REPO / "controlplane" / f"{name.split('.')[1]}.py").exists()}


def python_graph() -> dict[str, set[str]]:
    return {path.stem: python_imports(path) - {path.stem} for path in sorted((REPO / "controlplane").glob("*.py"))
            if path.stem != "__init__"}


def python_rank(module: str) -> int | None:
    return next((rank for rank, layer in enumerate(PYTHON_LAYERS) if module in layer), None)


def python_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm): each holds a cycle."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def python_violations(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in graph.items():
        rank = python_rank(module)
        if rank is None:
            found.append(f"controlplane/{module}.py: in no layer (add it to PYTHON_LAYERS)")
            continue
        found += [f"controlplane/{module}.py imports {target}, a layer above it" for target in sorted(targets)
                  if (python_rank(target) or 0) > rank]
    for path in sorted((REPO / "controlplane").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"controlplane/{path.name} imports {name}: the control plane stands below bench and tests"
                      for name in names if name.split(".")[0] in ("bench", "tests", "conftest")]
    return found


def test_no_include_points_upward_or_sideways():
    assert len(cpp_sources()) > 50  # the walk found the data plane
    assert cpp_violations() == []


def test_no_control_plane_import_points_upward():
    graph = python_graph()
    assert {"runner", "pipeline", "cli"} <= graph.keys()
    assert python_violations(graph) == []


def test_the_control_plane_has_no_import_cycle():
    assert python_cycles(python_graph()) == []


@pytest.mark.parametrize("graph, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_cycle_finder_finds_cycles(graph, cycle):
    assert python_cycles(graph) == cycle


def test_the_checks_see_an_upward_include_and_import(monkeypatch):
    # The checks read the real tree: a contract header that includes an NF, a mechanism that includes a scheduler
    # module, NFs that include a mechanism, and a runner that imports the pipeline must each be caught.
    for path, include, violation in [
            ("contract/x.h", "nfs/nf.h", "nfs is a layer above contract"),
            ("schedulers/mechanisms/x.h", "schedulers/unis/wait_queue.h", "schedulers is a layer above schedulers/mechanisms"),
            ("nfs/x.h", "schedulers/mechanisms/kernel_policy.h", "nfs and schedulers/mechanisms are siblings")]:
        found = _violations_with(Path(path), f'#include "{include}"\n', monkeypatch)
        assert f"{Path(path)} includes {include}: {violation}" in found, found
    graph = python_graph()
    graph["runner"] = graph["runner"] | {"pipeline"}
    assert "controlplane/runner.py imports pipeline, a layer above it" in python_violations(graph)
    assert python_cycles(graph)


def _violations_with(path: Path, text: str, monkeypatch) -> list[str]:
    real_sources, real_read = cpp_sources(), Path.read_text
    monkeypatch.setattr(sys.modules[__name__], "cpp_sources", lambda: [*real_sources, path])
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: text if self == REPO / path else real_read(self, *a, **k))
    return cpp_violations()
