"""The μNF composer (μNF, Secs. IV-D and V-B): from the μNF graph that chains an SFC's VNFs as they are, a graph
with the same semantics minus the repeated work, and where descriptors allow it, μNFs run in parallel.

Redundancy is found by a forward data-flow pass over the graph (available expressions, as compilers find common
subexpressions). A μNF that is stateless and writes nothing is a pure function of the header fields it reads:
  - a check (it may drop; e.g. checkip, validate_url) that an identical one (type and arguments) already passed
    on every path to it, with no μNF between writing a field it reads, cannot drop anything: it goes, its edges in
    lead straight to its successor;
  - a classifier (it labels; e.g. http_classifier) whose identical twin already labelled the packet on every path
    along one of its edges in, the same way: it goes, and that edge leads straight to where its label's edge led.
Stateful μNFs (counters) are never merged: their state is what their reports show; nor are random ones (drop), whose
verdict is no function of the packet. A μNF whose descriptor is unknown territory (an external application) forgets
everything known before it. A μNF that a merge leaves with no edge in (a classifier's gate that can no longer fire:
its twin upstream already sent the packet the other way) goes too, as unreachable, and so on down.
Parallel groups: a line of two or more μNFs between a node and its successor, none of which drops or touches a
field another writes (the catalog's rule), becomes branches of a group; groups never share a μNF (a branch is never
the fork of another group)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

from controlplane.sfc.sfc_request import MicroEdge, MicroGraph, SfcGraph


@dataclass
class Merge:
    removed: str
    kept: list[str]  # the identical μNFs before it that made it redundant
    why: str


@dataclass
class Composition:
    unmerged: MicroGraph
    composed: MicroGraph
    merges: list[Merge] = field(default_factory=list)
    groups: list[list[str]] = field(default_factory=list)  # each parallel group's branches (one μNF each)
    unreachable: list[str] = field(default_factory=list)  # μNFs no packet can reach once the merges were made
    candidates: list[list[str]] = field(default_factory=list)  # groups possible but not made (see notes)
    notes: list[str] = field(default_factory=list)


def _key(node) -> str:
    return json.dumps({"type": node.type, "args": node.args}, sort_keys=True)


def _kind(descriptor: dict) -> str | None:
    """check, classifier, or None (a μNF that can never be redundant)."""
    if descriptor["stateful"] or descriptor["writes"] or descriptor["random"]:
        return None
    if descriptor["gates"]:
        return None if descriptor["may_drop"] else "classifier"
    return "check" if descriptor["may_drop"] else None


@dataclass(frozen=True)
class _Fact:
    value: str | bool  # a classifier's label, or True for a check passed
    origins: frozenset  # the μNFs that established it
    reads: frozenset  # the fields it depends on


def _meet(states: list[dict]) -> dict:
    """What holds along every one of several edges into a node: the facts all of them carry with the same value."""
    if not states:
        return {}
    common = {}
    for key, fact in states[0].items():
        others = [state.get(key) for state in states[1:]]
        if all(other is not None and other.value == fact.value for other in others):
            common[key] = _Fact(fact.value, fact.origins.union(*(o.origins for o in others)), fact.reads)
    return common


def eliminate_redundant(graph: MicroGraph, descriptors: dict[str, dict]) -> tuple[MicroGraph, list[Merge], list[str]]:
    """The graph without its redundant μNFs; the merges, and the μNFs they left unreachable (removed too). The nodes
    come in topological order, the entry first, so every edge into a node is settled before the node is."""
    graph = copy.deepcopy(graph)
    merges: list[Merge] = []
    unreachable: list[str] = []
    state: dict[int, dict] = {}  # per edge (by id of the MicroEdge): the facts it carries
    entry = next(iter(graph.nodes), None)

    def carried(edge: MicroEdge) -> dict:
        return state.get(id(edge), {})

    for name in list(graph.nodes):
        if name != entry and not graph.into(name):  # only gates of a merged classifier fed it: no packet comes
            graph.edges = [e for e in graph.edges if e.source != name]
            del graph.nodes[name]
            unreachable.append(name)
            continue
        node = graph.nodes[name]
        descriptor = descriptors[node.type]
        into, out = graph.into(name), graph.out_of(name)
        kind, key = _kind(descriptor), _key(node)
        rewired = None
        if kind == "check" and into and len(out) == 1 and out[0].label is None:
            known = _meet([carried(e) for e in into])
            if key in known:
                rewired = [(e, out[0].target) for e in into]
                why = (
                    f"passed {' and '.join(sorted(known[key].origins))} already, "
                    "and nothing between writes what it reads"
                )
                origins = known[key].origins
        elif kind == "classifier" and into and out and all(e.label is not None for e in out):
            by_label = {e.label: e.target for e in out}
            facts = [carried(e).get(key) for e in into]
            if all(f is not None and f.value in by_label for f in facts):
                rewired = [(e, by_label[f.value]) for e, f in zip(into, facts, strict=True)]
                why = (
                    f"{' and '.join(sorted(set().union(*(f.origins for f in facts))))} labelled the packet already, "
                    "and nothing between writes what it reads: each edge in leads where that label leads"
                )
                origins = frozenset().union(*(f.origins for f in facts))
        if rewired is not None:
            pairs = {(e.source, e.target) for e in graph.edges if e.target != name}
            new_pairs = [(e.source, target) for e, target in rewired]
            if len(set(new_pairs)) == len(new_pairs) and not set(new_pairs) & pairs:  # else two edges between one pair
                for e, target in rewired:
                    e.target = target  # keeps its label and the facts it carries
                graph.edges = [e for e in graph.edges if e.source != name]
                del graph.nodes[name]
                merges.append(Merge(name, sorted(origins), why))
                continue
        # Kept: what holds after it, along each of its edges out.
        before = _meet([carried(e) for e in into])
        written = set(descriptor["writes"])
        external = node.type == "external"
        after = {} if external else {k: f for k, f in before.items() if not (f.reads & written)}
        for e in out:
            facts = dict(after)
            if kind == "check":
                facts[key] = _Fact(True, frozenset([name]), frozenset(descriptor["reads"]))
            elif kind == "classifier" and e.label is not None:
                facts[key] = _Fact(e.label, frozenset([name]), frozenset(descriptor["reads"]))
            state[id(e)] = facts
    return graph, merges, unreachable


def _may_run_in_parallel(a: dict, b: dict) -> bool:
    """The catalog's rule (nfs/descriptor.cc): neither drops, and neither writes what the other reads or writes."""
    if a["may_drop"] or b["may_drop"]:
        return False
    touched_a, touched_b = set(a["reads"]) | set(a["writes"]), set(b["reads"]) | set(b["writes"])
    return not (set(a["writes"]) & touched_b) and not (set(b["writes"]) & touched_a)


def parallel_runs(graph: MicroGraph, descriptors: dict[str, dict]) -> list[tuple[str, list[str], str]]:
    """(before, run, after): lines of two or more μNFs that may all process a packet at once, between a node with
    one unlabelled edge out and the node after them."""
    runs, used = [], set()
    for before in graph.nodes:
        out = graph.out_of(before)
        if before in used or len(out) != 1 or out[0].label is not None:  # a branch never forks another group
            continue
        run, at = [], out[0].target
        while True:
            node = graph.nodes[at]
            leaving, entering = graph.out_of(at), graph.into(at)
            d = descriptors[node.type]
            if (
                at in used
                or len(entering) != 1
                or len(leaving) != 1
                or leaving[0].label is not None
                or node.type in ("external", "pass")
                or d["may_drop"]
                or not all(_may_run_in_parallel(d, descriptors[graph.nodes[other].type]) for other in run)
            ):
                break
            run.append(at)
            at = leaving[0].target
        if len(run) >= 2:
            runs.append((before, run, at))
            used.update(run)
    return runs


def parallelise(graph: MicroGraph, runs: list[tuple[str, list[str], str]]) -> MicroGraph:
    graph = copy.deepcopy(graph)
    for before, run, after in runs:
        inside = set(run) | {before}
        graph.edges = [e for e in graph.edges if not (e.source in inside and (e.target in run or e.target == after))]
        for node in run:
            graph.edges += [MicroEdge(before, node), MicroEdge(node, after)]
    return graph


def compose(sfc: SfcGraph, unmerged: MicroGraph, descriptors: dict[str, dict]) -> Composition:
    composed, merges, unreachable = eliminate_redundant(unmerged, descriptors)
    runs = parallel_runs(composed, descriptors)
    cores = sfc.cores or [sfc.core]
    result = Composition(unmerged, composed, merges, unreachable=unreachable)
    if runs and (sfc.parallel == "on" or (sfc.parallel == "auto" and len(cores) > 1)):
        result.composed = parallelise(composed, runs)
        result.groups = [run for _, run, _ in runs]
    elif runs:
        result.candidates = [run for _, run, _ in runs]
        result.notes.append(
            "these μNFs may run in parallel but stay in line: "
            + (
                "parallel: off"
                if sfc.parallel == "off"
                else "one NF core, where branches would only take turns and add ~100 cycles a packet of ports "
                "(bench/results/port-costs.md); give cores: [...] or parallel: on"
            )
        )
    return result


def composed_chain(name: str, composition: Composition, cores: list[int | None]) -> dict:
    """The composed graph as a spec chain: the line's μNFs on the first core, each group's branches on the others;
    cores [None]: no core named, the placement solver chooses (placement: fewest_cores or auto)."""
    graph = composition.composed
    if cores == [None]:
        nodes = [{"name": n.name, "type": n.type, **({"args": n.args} if n.args else {})} for n in graph.nodes.values()]
        return {"name": name, "graph": {"nodes": nodes, "edges": _edge_documents(graph)}}
    core_of = {}
    for g, run in enumerate(composition.groups):
        for b, node in enumerate(run):
            core_of[node] = cores[1 + (g + b) % (len(cores) - 1)] if len(cores) > 1 else cores[0]
    nodes = [
        {"name": n.name, "type": n.type, "core": core_of.get(n.name, cores[0]), **({"args": n.args} if n.args else {})}
        for n in graph.nodes.values()
    ]
    return {"name": name, "graph": {"nodes": nodes, "edges": _edge_documents(graph)}}


def eval_graph(graph: MicroGraph) -> dict:
    """The graph as tandem-graph-eval reads it."""
    return {
        "nodes": [{"name": n.name, "type": n.type, "args": n.args} for n in graph.nodes.values()],
        "edges": _edge_documents(graph),
    }


def _edge_documents(graph: MicroGraph) -> list[dict]:
    """The edges as a spec's graph (and tandem-graph-eval) write them."""
    return [{"from": e.source, "to": e.target, **({"label": e.label} if e.label else {})} for e in graph.edges]


def explain(composition: Composition, costs: dict[str, float] | None = None) -> str:
    """What the composer did and why, and the cycles a packet it expects to save (from the cost profiles)."""
    unmerged, composed = composition.unmerged, composition.composed
    lines = [f"μNF graph: {len(unmerged.nodes)} μNFs as the VNFs chain them, {len(composed.nodes)} composed"]
    if composition.merges:
        lines.append("merged as redundant:")
        for merge in composition.merges:
            cost = costs.get(merge.removed) if costs else None
            lines.append(
                f"  {merge.removed} ({unmerged.nodes[merge.removed].type}): {merge.why}"
                + (f"; saves {cost:.0f} cycles a packet that reached it" if cost else "")
            )
    else:
        lines.append("nothing merged: no μNF repeats work an identical one did on every path to it")
    if composition.unreachable:
        lines.append(
            "removed as unreachable (only a merged classifier's other gates fed them, and its twin upstream already "
            "sent every packet the other way): " + ", ".join(composition.unreachable)
        )
    if composition.groups:
        lines.append("in parallel (read-only or disjoint fields, no drops, per descriptor):")
        lines += [f"  {' | '.join(run)}" for run in composition.groups]
    for run in composition.candidates:
        lines.append(f"could run in parallel: {' | '.join(run)}")
    lines += composition.notes
    if costs:
        saved = [costs[m.removed] for m in composition.merges if costs.get(m.removed)]
        total = sum(costs.get(name, 0) for name in unmerged.nodes)
        missing = [name for name in unmerged.nodes if not costs.get(name)]
        if total and saved:
            lines.append(
                f"expected saving: {sum(saved):.0f} of {total:.0f} cycles a packet that passes every μNF "
                f"({sum(saved) / total:.0%})" + (f"; not profiled: {', '.join(missing)}" if missing else "")
            )
    else:
        lines.append("expected saving: unknown until the μNFs are profiled (./tandem compose --profile, as root)")
    return "\n".join(lines)
