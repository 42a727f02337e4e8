"""A cluster's Tandem nodes as the operator sees them: each Node's annotations, written by its tandem-node agent,
say where the agent's control API listens, which whole cores Kubernetes gave it, its TSC rate and the NF costs it
measured."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from controlplane.planning import profile

PREFIX = "tandem.dev/"
CONTROL = PREFIX + "control"  # HOST:PORT of the agent's control API (TCP, with the cluster's token)
CORES = PREFIX + "cores"  # its NF cores, e.g. "1,2,3"
TSC_HZ = PREFIX + "tsc-hz"
COSTS = PREFIX + "costs"  # JSON: [{type, args, k_cycles, c_cycles}], the batch-time models it measured


class NodeReportError(ValueError):
    """A Node's Tandem annotations are wrong; the message names the Node and the annotation."""


@dataclass(frozen=True)
class TandemNode:
    name: str
    control: tuple[str, int]
    cores: tuple[int, ...]
    tsc_hz: float
    costs: dict[str, tuple[float, float]] = field(default_factory=dict)  # cost key -> (k, c) in this node's cycles
    ready: bool = True  # the Node's Ready condition


def is_tandem_node(node: dict) -> bool:
    return CONTROL in (node.get("metadata", {}).get("annotations") or {})


def tandem_node(node: dict) -> TandemNode:
    """The Tandem node a Node object describes; NodeReportError naming the annotation when one is wrong."""
    name = node["metadata"]["name"]
    notes = node["metadata"].get("annotations") or {}

    def wrong(key: str, why: str) -> NodeReportError:
        return NodeReportError(f"node {name}: annotation {key}: {why}")

    for key in (CONTROL, CORES, TSC_HZ):
        if key not in notes:
            raise wrong(key, "missing (the tandem-node agent writes it)")
    host, colon, port = notes[CONTROL].rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise wrong(CONTROL, f"{notes[CONTROL]!r} is not HOST:PORT")
    try:
        cores = tuple(int(core) for core in notes[CORES].split(","))
    except ValueError:
        raise wrong(CORES, f"{notes[CORES]!r} is not a comma-separated list of core numbers") from None
    if not cores or min(cores) < 0 or len(set(cores)) != len(cores):
        raise wrong(CORES, f"{notes[CORES]!r}: give distinct cores, at least one")
    try:
        hz = float(notes[TSC_HZ])
    except ValueError:
        raise wrong(TSC_HZ, f"{notes[TSC_HZ]!r} is not a number") from None
    if not hz > 0:
        raise wrong(TSC_HZ, "must be above 0")
    return TandemNode(name, (host, int(port)), cores, hz, _costs(notes.get(COSTS, "[]"), wrong), _ready(node))


def _costs(text: str, wrong) -> dict[str, tuple[float, float]]:
    try:
        entries = json.loads(text)
    except ValueError as error:
        raise wrong(COSTS, f"not JSON: {error}") from None
    if not isinstance(entries, list):
        raise wrong(COSTS, "a list of {type, args, k_cycles, c_cycles}")
    costs = {}
    for i, entry in enumerate(entries):
        try:
            key = profile.cost_key({"type": str(entry["type"]), "args": dict(entry.get("args") or {})})
            k, c = float(entry["k_cycles"]), float(entry["c_cycles"])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise wrong(COSTS, f"entry {i}: give type, args (a mapping), k_cycles and c_cycles") from None
        if not (k > 0 and c >= 0):
            raise wrong(COSTS, f"entry {i}: k_cycles above 0 and c_cycles at least 0")
        costs[key] = (k, c)
    return costs


def _ready(node: dict) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def annotations(control: str, cores: list[int], tsc_hz: float, models: list[dict]) -> dict[str, str]:
    """What an agent writes on its Node: `models` as [{type, args, k_cycles, c_cycles}]."""
    return {
        CONTROL: control,
        CORES: ",".join(map(str, cores)),
        TSC_HZ: repr(float(tsc_hz)),
        COSTS: json.dumps(models, sort_keys=True, separators=(",", ":")),
    }
