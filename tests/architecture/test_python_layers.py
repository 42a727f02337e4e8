"""The control plane's layers point one way: its packages stand in layers, and no Python import reaches a layer above
its own or a sibling package of its own layer; no import cycle between modules, no module over 400 lines, and nothing
of bench/ or tests/ imported. Imports inside functions count.

Run alone with: .venv/bin/python -m pytest tests/architecture -q"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

CONTROL_PLANE = REPO / "controlplane"
MAX_MODULE_LINES = 400

# Control-plane units, bottom first: a package (controlplane/NAME/), or a module at the top (errors, api, __main__).
# A module may import its own package's modules (without a cycle) and any unit of a lower layer; units that share a
# layer are siblings and import nothing of each other.
PYTHON_LAYERS = [
    ["errors", "terminal"],  # errors that reach the user as one message; tables, numbers and progress on the terminal
    ["machine"],  # this machine: its cores, the changes a run makes (journaled, undone), what is measured
    ["spec"],  # the spec: models, limits, loading, checks, the data plane's catalog, the deployment
    ["sfc", "results"],  # SFC requests composed into specs; results as models, reports, plots, live metrics
    ["launch"],  # one launch of the data plane
    ["planning"],  # costs, rate shares and batch models measured by launches; placement from them
    ["experiment"],  # validate -> place -> cost -> launch (pipeline); repeated runs (compare)
    ["kubernetes"],  # Tandem on a cluster: the ServiceChain resource and its CRD
    ["api"],  # the Python API (tandem.py)
    ["cli"],  # the command line on it
    ["__main__"],  # python -m controlplane
]


def module_name(path: Path) -> str:
    """controlplane/spec/models.py -> controlplane.spec.models; a package's __init__.py is the package."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(CONTROL_PLANE.rglob("*.py"))}


def unit_of(module: str) -> str | None:
    """The layer unit of a control-plane module: its package, or itself where it sits at the top."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None  # the control plane's own __init__ is no unit


def imported_names(module: str, path: Path) -> set[str]:
    """Every dotted name `path` imports, wherever in it the import statement sits; `from a import b` gives a and a.b."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, one level up per dot beyond the first
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def python_graph() -> dict[str, set[str]]:
    """Control-plane module -> the control-plane modules it imports (a name that is no module names its module)."""
    known = modules()
    graph = {}
    for module, path in known.items():
        targets = set()
        for name in imported_names(module, path):
            if name.startswith("controlplane."):
                parts = name.split(".")
                while parts and ".".join(parts) not in known:
                    parts.pop()  # from controlplane.spec.models import Spec: the module controlplane.spec.models
                targets.add(".".join(parts))
        graph[module] = targets - {module, "controlplane"}
    return graph


def python_rank(unit: str) -> int | None:
    return next((rank for rank, layer in enumerate(PYTHON_LAYERS) if unit in layer), None)


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
    """Imports of a higher layer or of a sibling unit, and modules of no layer."""
    found = []
    for module, targets in sorted(graph.items()):
        unit = unit_of(module)
        if unit is None:
            continue
        rank = python_rank(unit)
        if rank is None:
            found.append(f"{module}: {unit} is in no layer (add it to PYTHON_LAYERS)")
            continue
        for target in sorted(targets):
            target_unit = unit_of(target)
            target_rank = python_rank(target_unit) if target_unit else None
            if target_unit is None or target_unit == unit or target_rank is None:
                continue  # the control plane's own __init__, its own package; a unit of no layer is named above
            if target_rank > rank:
                found.append(f"{module} imports {target}: {target_unit} is a layer above {unit}")
            elif target_rank == rank:
                found.append(f"{module} imports {target}: {target_unit} and {unit} are siblings of one layer")
    return found


def test_no_control_plane_import_points_upward_or_sideways():
    graph = python_graph()
    assert {"controlplane.launch.runner", "controlplane.experiment.pipeline", "controlplane.cli.main"} <= graph.keys()
    assert python_violations(graph) == []


def test_every_package_and_top_level_module_has_a_layer():
    units = {unit_of(module) for module in modules()} - {None}
    assert units == {unit for layer in PYTHON_LAYERS for unit in layer}


def test_the_control_plane_has_no_import_cycle():
    assert python_cycles(python_graph()) == []


def test_no_control_plane_module_is_over_400_lines():
    long = {module: len(path.read_text().splitlines()) for module, path in modules().items()}
    assert {module: lines for module, lines in long.items() if lines > MAX_MODULE_LINES} == {}


def test_the_control_plane_imports_nothing_of_bench_or_tests():
    found = [
        f"{module} imports {name}"
        for module, path in modules().items()
        for name in imported_names(module, path)
        if name.split(".")[0] in ("bench", "tests", "conftest")
    ]
    assert found == []


def test_every_package_says_what_it_is_in_one_line():
    for package in sorted(path.parent for path in CONTROL_PLANE.rglob("__init__.py")):
        tree = ast.parse((package / "__init__.py").read_text())
        doc = ast.get_docstring(tree)
        assert doc and "\n" not in doc, f"{package}/__init__.py: a one-line docstring"
    for module, path in modules().items():
        assert ast.get_docstring(ast.parse(path.read_text())), f"{module}: a header docstring"


@pytest.mark.parametrize(
    "graph, cycle",
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_cycle_finder_finds_cycles(graph, cycle):
    assert python_cycles(graph) == cycle


def test_the_check_sees_an_upward_import_and_its_cycle():
    # A runner that imports the pipeline must be caught, as an upward import and as a cycle.
    graph = python_graph()
    graph["controlplane.launch.runner"] = graph["controlplane.launch.runner"] | {"controlplane.experiment.pipeline"}
    assert (
        "controlplane.launch.runner imports controlplane.experiment.pipeline: experiment is a layer above launch"
        in python_violations(graph)
    )
    pair = {"controlplane.experiment.pipeline", "controlplane.launch.runner"}
    assert any(pair <= set(group) for group in python_cycles(graph))


def test_the_check_sees_an_import_between_siblings():
    graph = python_graph()
    graph["controlplane.sfc.compose"] = graph["controlplane.sfc.compose"] | {"controlplane.results.run_report"}
    assert (
        "controlplane.sfc.compose imports controlplane.results.run_report: results and sfc are siblings of one layer"
        in python_violations(graph)
    )


def test_the_import_reader_resolves_each_form(tmp_path):
    module = tmp_path / "example.py"
    module.write_text(
        "import controlplane.spec.models\nfrom controlplane.spec import catalog\n"
        "def f():\n    from . import runner\n    from .runner import launch\n"
    )
    names = imported_names("controlplane.launch.example", module)
    assert {
        "controlplane.spec.models",
        "controlplane.spec.catalog",
        "controlplane.launch.runner",
        "controlplane.launch.runner.launch",
    } <= names
