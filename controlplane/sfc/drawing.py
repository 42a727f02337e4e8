"""μNF graphs drawn with Graphviz: DOT text, rendered to SVG and PNG by its `dot` (Debian package graphviz)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from controlplane.sfc.sfc_request import MicroGraph


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot_text(graph: MicroGraph, title: str, removed: list[str] = (), groups: list[list[str]] = ()) -> str:
    """The graph in DOT: one cluster per VNF, μNFs as boxes (type under name), labelled edges with their label;
    the μNFs the composer removed, if given, dashed and grey, and each parallel group's branches filled."""
    lines = [
        f"digraph {_quote(title)} {{",
        "  rankdir=LR;",
        '  node [shape=box, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
        f"  label={_quote(title)}; labelloc=t;",
    ]
    in_group = {name for run in groups for name in run}
    by_vnf: dict[str | None, list] = {}
    for node in graph.nodes.values():
        by_vnf.setdefault(node.vnf, []).append(node)
    for vnf, nodes in by_vnf.items():
        if vnf is not None:
            lines.append(f"  subgraph {_quote('cluster_' + vnf)} {{ label={_quote(vnf)}; style=rounded; color=grey60;")
        for node in nodes:
            style = ", style=filled, fillcolor=lightblue" if node.name in in_group else ""
            lines.append(
                f"    {_quote(node.name)} [label={_quote(node.name.split('.')[-1] + chr(10) + node.type)}{style}];"
            )
        if vnf is not None:
            lines.append("  }")
    for name in removed:
        lines.append(f"  {_quote(name)} [style=dashed, color=grey, fontcolor=grey];")
    lines.append('  "sink" [shape=oval];')
    lines.append('  "generator" [shape=oval];')
    targets = {e.target for e in graph.edges}
    sources = {e.source for e in graph.edges}
    for name in graph.nodes:
        if name not in targets:
            lines.append(f'  "generator" -> {_quote(name)};')
        if name not in sources:
            lines.append(f'  {_quote(name)} -> "sink";')
    for e in graph.edges:
        lines.append(
            f"  {_quote(e.source)} -> {_quote(e.target)}" + (f" [label={_quote(e.label)}]" if e.label else "") + ";"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(dot: str, prefix: Path) -> list[str]:
    """Writes PREFIX.dot, and PREFIX.svg and PREFIX.png where Graphviz is installed; returns what it wrote, or why
    not."""
    written = [f"{prefix}.dot"]
    Path(f"{prefix}.dot").write_text(dot)
    renderer = shutil.which("dot")
    if renderer is None:
        return written + ["(no SVG or PNG: Graphviz's dot is not installed; ./scripts/setup.sh installs it)"]
    for fmt in ("svg", "png"):
        out = Path(f"{prefix}.{fmt}")
        result = subprocess.run(
            [renderer, f"-T{fmt}", "-o", str(out)], input=dot, text=True, capture_output=True, timeout=60
        )
        written.append(str(out) if result.returncode == 0 else f"(dot -T{fmt} failed: {result.stderr.strip()[:200]})")
    return written
