"""The spec file: typed models of chains, NFs, traffic and scheduler, loaded from YAML with located errors."""
from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Literal, Union

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator, model_validator

from controlplane.chain_graph import Edge, graph_problems, line_edges, parallel_forks, topological_order
from controlplane.errors import SpecError
from controlplane.http_traffic import DEFAULT_URLS, MAX_HTTP_FLOWS, flow_urls, url_problem
from controlplane.pcap_file import replay_problem

# The papers' data-centre traffic: a bimodal mix around 200 B and 1400 B (UNiS Fig. 8, after Benson et al.).
DATACENTER_MIX = [(64, 5), (180, 15), (200, 20), (220, 10), (1380, 15), (1400, 25), (1420, 10)]
MIN_FRAME, MAX_FRAME = 64, 1518
# The data plane's sizes, which its catalog declares too (limits; tests/controlplane/test_spec_errors.py holds
# them equal): checked here so that a spec is refused by field before the data plane is asked.
MAX_HOPS = 64  # hop record size in the packet metadata (contract/packet_meta.h): the NFs of one chain
MAX_NFS = 128  # stats zone slots (contract/shm_layout.h)
MAX_BURST = 1024  # contract/batch.h
MAX_KERNEL_MUX = 256  # contract/deployment.h
MAX_RING = 1 << 22  # slots; the mbuf pool is sized from the rings, and hugepages from the pool
MAX_RATE_PPS = 1e10  # far above any core's reach; larger numbers are typos, and overflow the generator's pacing
MIN_STEP_SECONDS = 1e-3  # the generator counts a step in whole TSC cycles: one under a cycle is 0, and divides by it
MAX_SPEC_BYTES = 10 << 20
# Values in the document, an alias (*name) counted as often as it is used: a spec of 128 NFs needs a few thousand.
# Bounds the time to read a spec (PyYAML composes ~20k values a second) and refuses alias bombs, whose few
# aliases stand for billions of values once anything walks them.
MAX_VALUES = 50_000

_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgG]?)pps\s*$")
_RATE_SCALE = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _json_numbers(value: JsonValue) -> JsonValue:
    """NF args and scheduler options go to the data plane as JSON, which reads no integer beyond a double's range."""
    if isinstance(value, int) and abs(value) > sys.float_info.max:
        raise ValueError(f"must be within ±1.8e308, the data plane's range; got a number of {value.bit_length()} bits")
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        _json_numbers(item)
    return value


# JSON values only: dates, sets, binary data, inf and nan have no JSON, and huge integers no reader.
DataPlaneValue = Annotated[JsonValue, AfterValidator(_json_numbers)]


class Strict(BaseModel):
    # No inf or nan anywhere: `.inf` passes a `gt=0` bound, and would reach the data plane as a weight or a rate.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class SizeWeight(Strict):
    size: int = Field(ge=MIN_FRAME, le=MAX_FRAME)
    weight: float = Field(gt=0, le=1e6)  # relative; the data plane sums them, and a sum of 1e308s is inf


def _packets_per_second(value, expected: str, allow_zero: bool) -> float:
    if isinstance(value, bool):
        raise ValueError(f"must be {expected}")
    if isinstance(value, (int, float)):
        try:
            pps = float(value)
        except OverflowError:  # an integer beyond a float's range
            pps = math.inf
    else:
        match = _RATE.match(str(value))
        if not match:
            raise ValueError(f"must be {expected}, got {value!r}")
        pps = float(match.group(1)) * _RATE_SCALE[match.group(2).lower()]
    if not math.isfinite(pps) or pps < 0 or (pps == 0 and not allow_zero):
        raise ValueError(f"must be a {'non-negative' if allow_zero else 'positive'} rate, got {value!r}")
    if pps > MAX_RATE_PPS:
        raise ValueError(f"must be at most {MAX_RATE_PPS / 1e9:.0f} Gpps, got {value!r}")
    return pps


class HttpTraffic(Strict):
    """TCP flows each carrying one HTTP request: frame sizes follow the requests."""

    urls: list[str] | None = None  # the benign mix, one URL per flow in turn; left out: http_traffic.DEFAULT_URLS
    malicious: float = Field(default=0.0, ge=0, le=1)  # share of flows whose URL is an SQL-injection attempt
    # Share of flows whose TCP segments carry no HTTP request (bare segments, as a TLS or SSH flow's ACKs look to an
    # HTTP classifier): what a classifier's "other" way gets.
    other: float = Field(default=0.0, ge=0, le=1)

    @model_validator(mode="after")
    def _shares(self):
        if self.malicious + self.other > 1:
            raise ValueError(f"malicious and other are shares of the flows: together at most 1, got {self.malicious + self.other:g}")
        return self

    @field_validator("urls")
    @classmethod
    def _urls(cls, value):
        if value is not None:
            if not value:
                raise ValueError("the URL list is empty")
            for i, url in enumerate(value):
                if problem := url_problem(url):
                    raise ValueError(f"URL {i}: {problem}")
        return value


class Traffic(Strict):
    """What the generator offers a chain. Fields left out fall back to the spec's top-level traffic."""

    rate: Union[float, str, None] = None
    # Rates that follow one another every `step_seconds`, cycling (0 = no traffic): load that changes over time.
    rate_steps: Union[list[Union[float, str]], None] = None
    step_seconds: float | None = Field(default=None, gt=0, le=3600)
    size: Union[int, str, list[SizeWeight], None] = None
    flows: int | None = Field(default=None, ge=1, le=1 << 20)
    protocol: str | None = None
    http: HttpTraffic | None = None
    # A capture replayed as the chain's traffic (classic pcap, Ethernet; relative to the spec's folder), its
    # packets in turn, again and again unless `loop` is false.
    pcap: str | None = Field(default=None, min_length=1)
    loop: bool | None = None

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, value):
        if value is None or (isinstance(value, str) and value.strip() == "max"):
            return value
        return _packets_per_second(value, "'max', a number of packets per second, or like '2.5 Mpps'", allow_zero=False)

    @field_validator("rate_steps", mode="before")
    @classmethod
    def _rate_steps(cls, value):
        if value is None:
            return value
        if not isinstance(value, list) or not value:
            raise ValueError("must be a non-empty list of rates, e.g. [0, 1 Mpps, 2.5 Mpps]")
        steps = []
        for i, step in enumerate(value):
            try:
                steps.append(_packets_per_second(step, "a number of packets per second or like '2.5 Mpps' (0 = none)", allow_zero=True))
            except ValueError as error:
                raise ValueError(f"step {i}: {error}") from None
        return steps

    @field_validator("step_seconds")
    @classmethod
    def _step_seconds(cls, value):
        if value is not None and value < MIN_STEP_SECONDS:
            raise ValueError(f"must be at least {MIN_STEP_SECONDS} s, got {value}")
        return value

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, value):
        # Checked before the union converts: it would take 2000.0 as 2000 bytes, and !!binary data as text.
        if isinstance(value, bool) or not isinstance(value, (int, float, str, list, type(None))):
            raise ValueError("must be a frame size in bytes, 'datacenter', or a list of {size, weight}")
        if isinstance(value, (int, float)) and not MIN_FRAME <= value <= MAX_FRAME:
            raise ValueError(f"must be between {MIN_FRAME} and {MAX_FRAME} bytes, got {value}")
        if isinstance(value, str) and value != "datacenter":
            raise ValueError(f"must be a frame size in bytes, 'datacenter', or a list of {{size, weight}}, got {value!r}")
        if isinstance(value, list) and not value:
            raise ValueError("the size list is empty")
        return value

    @field_validator("protocol", mode="before")
    @classmethod
    def _protocol(cls, value):
        if value is not None and value not in ("udp", "tcp"):
            raise ValueError(f"must be udp or tcp, got {value!r}")
        return value


class ScaleSpec(Strict):
    """μNF's auto-scaling (IV-E), with scale-in: up to max_instances instances of the NF take its flows (by a flow
    hash, so a flow stays on one); drops at its input that persist over window_ms give it one more, instances whose
    work fits in one fewer over idle_ms (busy below idle_below x one fewer) give one back, cooldown_ms after each."""
    max_instances: int = Field(default=2, ge=2, le=8)
    # The cores of instances 2, 3, ... in order; by default the NF core with the most headroom by the placement
    # model where the machine has more than one, else the NF's own (controlplane/spare_cores.py).
    cores: list[int] | None = None
    window_ms: float = Field(default=100, gt=0, le=60_000)
    cooldown_ms: float = Field(default=500, ge=0, le=600_000)
    idle_ms: float = Field(default=1000, gt=0, le=600_000)
    idle_below: float = Field(default=0.5, gt=0, le=1)


class NfSpec(Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    type: str
    core: int | None = Field(default=None, ge=0)  # required unless the spec has placement: auto
    args: dict[str, DataPlaneValue] = Field(default_factory=dict)
    # Cycles per packet, overriding the cycle estimator (schedulers that need costs: unis).
    cost_cycles: float | None = Field(default=None, gt=0, le=1e9)
    # Priority weight for schedulers that share CPU by weight (nfvnice); multiplied by the chain's.
    weight: float = Field(default=1.0, gt=0, le=1e6)
    # Initial batch size for bubble (a multiple of 16); by default from the offered rates.
    batch: int | None = Field(default=None, ge=16, le=MAX_BURST)
    # More instances of the NF as its input drops (ScaleSpec); none by default.
    scale: ScaleSpec | None = None
    # dpdk | kernel: how this NF moves packets, where a chain mixes them (SCC's kernel-I/O NFs beside DPDK NFs);
    # by default its chain's `io`. A link is a veth where an NF at either end is kernel-I/O, a ring otherwise.
    io: Literal["dpdk", "kernel"] | None = None


class EdgeSpec(Strict):
    source: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)
    # The output gate of `from` whose packets take this edge (a labelled fan-out after a classifier).
    label: str | None = Field(default=None, min_length=1)


class GraphSpec(Strict):
    nodes: list[NfSpec]
    edges: list[EdgeSpec] = Field(default_factory=list)


class ChainSpec(Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    nfs: list[NfSpec] | None = None  # a line: each NF feeds the next
    graph: GraphSpec | None = None   # or a graph: nodes, and edges between them
    ring_capacity: int | None = Field(default=None, le=MAX_RING)
    traffic: Traffic = Field(default_factory=Traffic)
    weight: float = Field(default=1.0, gt=0, le=1e6)  # priority weight of every NF of the chain
    # dpdk: NFs linked by rings in hugepage memory. kernel: each NF in its own network namespace, reading and
    # writing packet sockets on veths (SCC's kernel-I/O NFs), `mux` frames per system call (1: recvfrom/sendto per
    # frame; more: recvmmsg/sendmmsg), linked back to back (b2b) or through a switch: a Linux bridge, Open vSwitch's
    # kernel datapath (ovs) or its userspace datapath (ovs-userspace).
    io: Literal["dpdk", "kernel"] = "dpdk"
    mux: int | None = Field(default=None, ge=1, le=MAX_KERNEL_MUX)
    link: Literal["b2b", "bridge", "ovs", "ovs-userspace"] | None = None


def chain_nodes(chain: ChainSpec) -> list[NfSpec]:
    """A chain's NFs as the spec gives them: its list, or its graph's nodes."""
    if chain.graph is not None:
        return chain.graph.nodes
    return chain.nfs or []


def nf_io(nf: NfSpec, chain: ChainSpec) -> str:
    """How the NF moves packets: its own `io`, or its chain's."""
    return nf.io or chain.io


def kernel_io_nodes(chain: ChainSpec) -> list[NfSpec]:
    """The chain's kernel-I/O NFs (all of them in an `io: kernel` chain, some where it mixes them)."""
    return [nf for nf in chain_nodes(chain) if nf_io(nf, chain) == "kernel"]


def mixes_io(chain: ChainSpec) -> bool:
    """Whether the chain has DPDK and kernel-I/O NFs both."""
    return 0 < len(kernel_io_nodes(chain)) < len(chain_nodes(chain))


def node_where(chain: ChainSpec, where: str, n: int) -> str:
    """The spec path of a chain's n-th NF as the spec gives them."""
    return f"{where}.graph.nodes[{n}]" if chain.graph is not None else f"{where}.nfs[{n}]"


def chain_edges(chain: ChainSpec, where: str) -> list[Edge]:
    if chain.graph is None:
        return line_edges([nf.name for nf in chain_nodes(chain)], where)
    return [Edge(e.source, e.to, e.label, f"{where}.graph.edges[{i}]") for i, e in enumerate(chain.graph.edges)]


class SchedulerSpec(Strict):
    name: str
    options: dict[str, DataPlaneValue] = Field(default_factory=dict)


class Spec(Strict):
    name: str = "tandem"
    description: str = ""
    control_core: int = Field(default=0, ge=0)
    burst: int = Field(default=32, ge=1, le=MAX_BURST)
    # Pipelined prefetching (μNF, Sec. V-B): while an NF works on packet i of a batch, packet i + prefetch's first
    # data cache line is fetched; 0 turns it off (bench/micronf_experiments.py fig7 measures what it is worth).
    prefetch: int = Field(default=0, ge=0, le=MAX_BURST)
    ring_capacity: int = Field(default=2048, le=MAX_RING)
    duration: float = Field(default=5.0, gt=0, le=3600)
    warmup: float = Field(default=0.5, ge=0, le=600)
    traffic: Traffic = Field(default_factory=Traffic)
    scheduler: SchedulerSpec = Field(default_factory=lambda: SchedulerSpec(name="coop"))
    # Options for the other schedulers a comparison runs (`compare --schedulers`), by scheduler name.
    scheduler_options: dict[str, dict[str, DataPlaneValue]] = Field(default_factory=dict)
    chains: list[ChainSpec]
    # spec: every NF's core is given; auto: Bubble's placement solver chooses cores and initial batch sizes, for the
    # most weighted throughput; fewest_cores: μNF-MC, every chain at its rate on as few cores as carry it, consecutive
    # μNFs that pass the most traffic together (controlplane/placement.py).
    placement: Literal["spec", "auto", "fewest_cores"] = "spec"
    placement_cores: list[int] | None = None  # cores the solver may use; default: every core but the control core

    @field_validator("scheduler", mode="before", json_schema_input_type=Union[str, SchedulerSpec])
    @classmethod
    def _scheduler(cls, value):
        return {"name": value} if isinstance(value, str) else value  # `scheduler: cfs` is short for {name: cfs}


# Pydantic names the branch of a union that failed ("float", "list[SizeWeight]", "function-after[...]");
# spec fields are lower-case words, so anything else in a location is such a name and is left out.
_FIELD_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_TYPE_NAMES = {"str", "float", "int", "bool", "list", "dict"}


def _location(loc: tuple) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _FIELD_NAME.match(str(part)) and part not in _TYPE_NAMES:
            path += ("." if path else "") + str(part)
    return path


def _pydantic_problems(error: ValidationError) -> list[tuple[str, str]]:
    problems: dict[str, str] = {}
    for item in error.errors():
        loc = item["loc"]
        path = _location(loc)
        message = item["msg"].removeprefix("Value error, ")
        bad_key = loc[-1:] == ("[key]",)  # pydantic's mark for a key (not its value) of the wrong type
        if item["type"] in ("extra_forbidden", "invalid_key") or bad_key:
            # The key is the user's own text, not a union branch: named whatever it looks like.
            key, parent = loc[-2 if bad_key else -1], _location(loc[:-2 if bad_key else -1])
            path = (f"{parent}.{key}" if parent else key) if isinstance(key, str) and _FIELD_NAME.match(key) else f"{parent}[{key!r}]"
            message = "unknown field" if item["type"] == "extra_forbidden" else "a key must be text (quote one that reads as a number, true/false or null)"
        elif item["type"] == "missing":
            message = "is required"
        elif item["type"] == "invalid-json-value":  # what YAML has and JSON lacks, in NF args and scheduler options
            kind = type(item["input"]).__name__
            message = f"must be a number, text, true/false, null, a list or a mapping, not a {kind}" + (
                " (quote it to give it as text)" if kind in ("date", "datetime") else "")
        problems.setdefault(path, message)  # a union reports once per branch; the first says enough
    # Where a union's branch got inside the value (a list of sizes), the other branches' complaints about the whole
    # ("should be a valid integer") miss the point.
    inside = {path[:i] for path in problems for i, char in enumerate(path) if char in ".["}
    return [(path, message) for path, message in problems.items() if path not in inside]


def _cpu_list(text: str) -> set[int]:
    """Parses a kernel CPU list such as "0-3,6"."""
    cpus: set[int] = set()
    for part in filter(None, text.strip().split(",")):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def usable_cores() -> set[int]:
    """The cores this machine gives Tandem's processes: its cgroup's cpuset (a container's share), else every online
    core. Not this process's own affinity: an SCC core reservation (of a run killed before it gave the cores back)
    takes the NF cores out of every task's affinity, and a spec must still be checked against the machine."""
    try:
        cgroup = Path("/proc/self/cgroup").read_text().splitlines()
        v2 = next((line.split(":", 2)[2] for line in cgroup if line.startswith("0::")), None)
        if v2 is not None:
            cpuset = Path("/sys/fs/cgroup") / v2.lstrip("/") / "cpuset.cpus.effective"
            if cpuset.exists() and cpuset.read_text().strip():
                return _cpu_list(cpuset.read_text())
        return _cpu_list(Path("/sys/devices/system/cpu/online").read_text())
    except (OSError, ValueError):
        return set(os.sched_getaffinity(0))


def _http_problems(spec: Spec, chain: ChainSpec, where: str) -> list[tuple[str, str]]:
    """HTTP traffic is TCP frames sized by their requests, one ready frame per flow."""
    http = chain.traffic.http or spec.traffic.http
    if http is None:
        return []
    problems = []
    for block, path in ((chain.traffic, f"{where}.traffic"), (spec.traffic, "traffic")):
        if block.http is None:
            continue
        if block.size is not None:
            problems.append((f"{path}.size", "with http the frame sizes follow the requests: leave size out"))
        if block.protocol == "udp":
            problems.append((f"{path}.protocol", "http traffic is TCP: leave protocol out or make it tcp"))
    flows = chain.traffic.flows or spec.traffic.flows or 64
    if flows > MAX_HTTP_FLOWS:
        source = f"{where}.traffic.flows" if chain.traffic.flows else "traffic.flows"
        problems.append((source, f"http traffic has one ready frame per flow: at most {MAX_HTTP_FLOWS} flows, got {flows}"))
    return problems


def _pcap_problems(spec: Spec, chain: ChainSpec, where: str) -> list[tuple[str, str]]:
    """A replayed capture is the chain's whole traffic: nothing else may shape its frames."""
    problems = []
    for block, path in ((chain.traffic, f"{where}.traffic"), (spec.traffic, "traffic")):
        if block.pcap is None:
            if block.loop is not None:
                problems.append((f"{path}.loop", "only a pcap replay loops: give pcap too"))
            continue
        if problem := replay_problem(block.pcap):
            problems.append((f"{path}.pcap", f"{block.pcap}: {problem}"))
        for field in ("size", "http", "protocol", "flows"):
            if getattr(block, field) is not None:
                problems.append((f"{path}.{field}", f"a pcap replay sends the capture's own frames: leave {field} out"))
    return problems


def instance_names(nf: NfSpec) -> list[str]:
    """A scaled NF's instances: the NF itself, then `name.2`, `name.3`, ...; an NF that is not scaled: itself."""
    return [nf.name] + [f"{nf.name}.{k}" for k in range(2, nf.scale.max_instances + 1)] if nf.scale else [nf.name]


def _scale_problems(spec: Spec, chain: ChainSpec, where: str, cores: set[int]) -> list[tuple[str, str]]:
    """Where an NF may be scaled: fed by one NF alone (whose egress spreads its flows), in a DPDK chain without
    parallel branches, on cores the spec gives."""
    nodes = chain_nodes(chain)
    scaled = [(n, nf) for n, nf in enumerate(nodes) if nf.scale]
    if not scaled:
        return []
    problems = []
    edges = chain_edges(chain, where)
    names = {nf.name for nf in nodes}
    out: dict[str, list[Edge]] = {}
    for edge in edges:
        out.setdefault(edge.source, []).append(edge)
    forks = sorted(parallel_forks(out))
    for n, nf in scaled:
        at = f"{node_where(chain, where, n)}.scale"
        into = [edge for edge in edges if edge.target == nf.name]
        if kernel_io_nodes(chain):
            problems.append((at, "scaling is for DPDK chains: this chain has kernel-I/O NFs, whose links are veths, not rings"))
        elif nf.type == "external":
            problems.append((at, "an external NF cannot be scaled: Tandem does not start its application"))
        elif spec.placement != "spec":
            problems.append((at, "needs placement: spec (the solver does not place instances yet): give the NF a core"))
        elif not into:
            problems.append((at, f"{nf.name} is the chain's first NF, fed by the generator's one ring: put an NF before it to spread its flows"))
        elif len(into) > 1:
            problems.append((at, f"{nf.name} has {len(into)} in-edges: a scaled NF is fed by one NF, whose egress spreads the flows"))
        elif forks:
            problems.append((at, f"the chain has a parallel group (after {forks[0]}): scaling inside one is not supported"))
        for name in instance_names(nf)[1:]:
            if name in names:
                problems.append((at, f"its instance {name!r} would take the name of another NF of the chain"))
        extra = nf.scale.max_instances - 1
        for k, core in enumerate(nf.scale.cores or []):
            if k >= extra:
                problems.append((f"{at}.cores", f"gives {len(nf.scale.cores)} cores for {extra} more instance(s)"))
                break
            if core not in cores:
                problems.append((f"{at}.cores[{k}]", f"core {core} does not exist on this machine (cores: {sorted(cores)})"))
            elif core == spec.control_core:
                problems.append((f"{at}.cores[{k}]", f"core {core} is the control core; instances go elsewhere"))
    return problems


def _semantic_problems(spec: Spec) -> list[tuple[str, str]]:
    problems = []
    cores = usable_cores()
    if spec.control_core not in cores:
        problems.append(("control_core", f"core {spec.control_core} does not exist on this machine (cores: {sorted(cores)})"))

    def check_capacity(path: str, capacity: int):
        if capacity < 2 or capacity & (capacity - 1):
            problems.append((path, f"must be a power of two (e.g. 1024, 2048), got {capacity}"))
        elif capacity < spec.burst:
            problems.append((path, f"must hold at least one burst ({spec.burst}), got {capacity}"))

    check_capacity("ring_capacity", spec.ring_capacity)
    if not spec.chains:
        problems.append(("chains", "the spec has no chains"))
    first_place: dict[tuple[str, str], str] = {}  # (kind, name) -> where it was first given

    def check_unique(kind: str, name: str, where: str):
        if (kind, name) in first_place:
            problems.append((f"{where}.name", f"duplicate {kind} name {name!r} (also {first_place[kind, name]})"))
        first_place.setdefault((kind, name), where)

    total_nfs = 0
    for c, chain in enumerate(spec.chains):
        where = f"chains[{c}]"
        check_unique("chain", chain.name, where)
        if chain.ring_capacity is not None:
            check_capacity(f"{where}.ring_capacity", chain.ring_capacity)
        nodes = chain_nodes(chain)
        listed = f"{where}.graph.nodes" if chain.graph is not None else f"{where}.nfs"
        if chain.nfs is not None and chain.graph is not None:
            problems.append((f"{where}.graph", "give the chain's NFs once: as nfs (a line) or as a graph, not both"))
        elif chain.nfs is None and chain.graph is None:
            problems.append((f"{where}.nfs", "is required: the chain's NFs as a list (a line), or a graph of nodes and edges"))
        elif not nodes:
            problems.append((listed, f"chain {chain.name!r} is empty: give it at least one NF"))
        if len(nodes) > MAX_HOPS:
            problems.append((listed, f"a chain has at most {MAX_HOPS} NFs, got {len(nodes)}"))
        if chain.graph is not None and nodes and chain.nfs is None:
            problems += graph_problems([nf.name for nf in nodes], chain_edges(chain, where), where)
        total_nfs += len(nodes)
        if not kernel_io_nodes(chain):
            problems += [(f"{where}.{field}", f"{field} is for chains with kernel-I/O NFs: add io: kernel (to the chain or an NF), "
                                              f"or leave {field} out") for field in ("mux", "link") if getattr(chain, field) is not None]
        elif mixes_io(chain) and chain.link not in (None, "b2b"):
            problems.append((f"{where}.link", "a chain that mixes DPDK and kernel-I/O NFs links them back to back (b2b): "
                                              "its DPDK NFs' links are rings, which no switch carries"))
        problems += _http_problems(spec, chain, where)
        problems += _pcap_problems(spec, chain, where)
        problems += _scale_problems(spec, chain, where, cores)
        total_nfs += sum(nf.scale.max_instances - 1 for nf in nodes if nf.scale)
        for n, nf in enumerate(nodes):
            nf_where = node_where(chain, where, n)
            check_unique("NF", nf.name, nf_where)
            if nf.core is None:
                if spec.placement == "spec":
                    problems.append((f"{nf_where}.core", "is required (or let the solver choose: placement: auto or fewest_cores)"))
            elif nf.core not in cores:
                problems.append((f"{nf_where}.core", f"core {nf.core} does not exist on this machine (cores: {sorted(cores)})"))
            elif nf.core == spec.control_core:
                problems.append((f"{nf_where}.core", f"core {nf.core} is the control core (generator, sink, scheduler); pin NFs elsewhere"))
    for p, core in enumerate(spec.placement_cores or []):
        if core not in cores:
            problems.append((f"placement_cores[{p}]", f"core {core} does not exist on this machine (cores: {sorted(cores)})"))
        elif core == spec.control_core:
            problems.append((f"placement_cores[{p}]", f"core {core} is the control core; NFs go elsewhere"))
    if spec.placement != "spec" and spec.placement_cores == []:
        problems.append(("placement_cores", "is empty: the solver needs at least one core"))
    if total_nfs > MAX_NFS:
        problems.append(("chains", f"at most {MAX_NFS} NFs in all, got {total_nfs}"))
    return problems


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
                None, None, f"more than {MAX_VALUES} values, each alias (*name) counted as its anchor's: refused, "
                "a spec needs far fewer", event.start_mark)
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
                None, None, f"not a valid {node.tag.rpartition(':')[2]}{detail}", node.start_mark) from None

    def construct_scalar(self, node):
        value = super().construct_scalar(node)
        if _SURROGATE.search(value):
            # Only "\uD83D\uDE00" escapes make these: a UTF-16 pair is joined into its character; half a pair has
            # no UTF-8 (nor JSON for the data plane).
            try:
                value = value.encode("utf-16", "surrogatepass").decode("utf-16")
            except UnicodeDecodeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a \\u escape gives half a UTF-16 surrogate pair: write the character, or \\U and 8 digits",
                    node.start_mark) from None
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
                            None, None, f"key {key!r} is given twice (first on line {seen[key] + 1})", key_node.start_mark)
                    seen[key] = key_node.start_mark.line
                except TypeError:
                    pass  # an unhashable key: the base class says so
        return super().construct_mapping(node, deep)  # which refuses a node that is not a mapping


def _read_text(path: Path, source: str) -> str:
    try:
        if not path.is_file():
            problem = "no such file" if not path.exists() else "not a regular file (a directory, a pipe, a device)"
            raise SpecError(source, [("", f"cannot read the spec: {problem}")])
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(source, [("", f"the spec is {size / 2**20:.1f} MB; specs are at most {MAX_SPEC_BYTES >> 20} MB")])
        return path.read_bytes().decode("utf-8")
    except OSError as error:
        raise SpecError(source, [("", f"cannot read the spec: {error.strerror or error}")]) from None
    except UnicodeDecodeError as error:
        raise SpecError(source, [("", f"the spec is not UTF-8 text (byte {error.start} is 0x{error.object[error.start]:02x})")]) from None


def _parse_yaml(text: str, source: str):
    try:
        return yaml.load(text, Loader=_SpecLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.reader.ReaderError as error:  # its text spans two lines and counts characters, not lines
        line = text.count("\n", 0, error.position) + 1
        column = error.position - text.rfind("\n", 0, error.position)
        raise SpecError(source, [("", f"malformed YAML: line {line}, column {column}: character #x{error.character:04x} is not allowed")]) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(source, [("", f"malformed YAML: {where}{getattr(error, 'problem', None) or error}")]) from None
    except RecursionError:
        raise SpecError(source, [("", "malformed YAML: nested too deeply")]) from None


def load_spec(path: str | Path) -> Spec:
    """Reads and checks a spec; raises SpecError naming the file and every bad field."""
    source = str(path)
    document = _parse_yaml(_read_text(Path(path), source), source)
    if not isinstance(document, dict):
        raise SpecError(source, [("", "the spec must be a YAML mapping with at least 'chains'")])
    return spec_from_document(document, path)


def spec_from_document(document: dict, path: str | Path) -> Spec:
    """Checks a spec's document (read from `path`, against which relative files resolve); raises SpecError."""
    source = str(path)
    try:
        spec = Spec.model_validate(document)
    except ValidationError as error:
        raise SpecError(source, _pydantic_problems(error)) from None
    except RecursionError:
        raise SpecError(source, [("", "a value is nested too deeply")]) from None
    for block in [spec.traffic] + [chain.traffic for chain in spec.chains]:
        if block.pcap is not None:
            block.pcap = str((Path(path).parent / block.pcap).resolve())
    problems = _semantic_problems(spec)
    if problems:
        raise SpecError(source, problems)
    return spec


def _resolved_traffic(spec: Spec, chain: ChainSpec) -> dict:
    def pick(field, default):
        own = getattr(chain.traffic, field)
        if own is not None:
            return own
        shared = getattr(spec.traffic, field)
        return shared if shared is not None else default

    rate = pick("rate", "max")
    size = pick("size", 64)
    if size == "datacenter":
        sizes = [[s, w] for s, w in DATACENTER_MIX]
    elif isinstance(size, list):
        sizes = [[entry.size, entry.weight] for entry in size]
    else:
        sizes = [[size, 1.0]]
    rate_pps, steps = 0.0 if rate == "max" else float(rate), pick("rate_steps", [])
    http, flows, pcap = pick("http", None), pick("flows", 64), pick("pcap", None)
    return {
        "rate_pps": rate_pps,
        "rate_steps_pps": steps,
        # What the chain offers on average (placement's rate, Bubble's initial batches): its fixed rate or the mean
        # of its steps; 0 = as fast as the generator can, unknown in advance.
        "mean_rate_pps": sum(steps) / len(steps) if steps else rate_pps,
        "step_seconds": pick("step_seconds", 1.0),
        "sizes": sizes,
        "flows": flows,
        "protocol": "tcp" if http else pick("protocol", "udp"),
        # Per flow, the URL its requests carry (the frame's size follows; "": a bare TCP segment); none: frames of the size mix.
        "http_urls": flow_urls(http.urls or DEFAULT_URLS, http.malicious, flows, http.other) if http and not pcap else [],
        # A capture to replay instead (its frames in turn), and whether to start again at its end.
        "pcap": pcap or "",
        "pcap_loop": pick("loop", True),
    }


def placement_cores(spec: Spec) -> list[int]:
    if spec.placement_cores is not None:
        return sorted(set(spec.placement_cores))
    return sorted(usable_cores() - {spec.control_core})


def _nf_config(nf: NfSpec, chain: ChainSpec, placeholder_core: int, where: str) -> dict:
    # Until the solver has placed it, an NF of an auto-placed spec sits on the first placement core.
    config = {"name": nf.name, "type": nf.type, "core": nf.core if nf.core is not None else placeholder_core, "args": nf.args,
              "weight": nf.weight * chain.weight, "spec_path": where}
    if kernel_io_nodes(chain):
        config["io"] = nf_io(nf, chain)
    if nf.batch is not None:
        config["batch"] = nf.batch
    if nf.cost_cycles is not None:
        config["cost_cycles"] = nf.cost_cycles
        config["cost_source"] = "spec"
    return config


def run_config(spec: Spec, scheduler: str | None = None, duration: float | None = None) -> dict:
    """The data plane's run description; `scheduler` and `duration` override the spec's."""
    if scheduler is None or scheduler == spec.scheduler.name:
        chosen = {"name": spec.scheduler.name, "options": dict(spec.scheduler.options)}
    else:
        chosen = {"name": scheduler, "options": dict(spec.scheduler_options.get(scheduler, {}))}
    cores = placement_cores(spec)
    placeholder = cores[0] if cores else spec.control_core
    return {
        "name": spec.name,
        "placement": spec.placement,
        "placement_cores": cores,
        "control_core": spec.control_core,
        "burst": spec.burst,
        "prefetch": spec.prefetch,
        "duration": duration if duration is not None else spec.duration,
        "warmup": spec.warmup,
        "scheduler": chosen,
        "chains": [_chain_config(spec, chain, f"chains[{c}]", placeholder) for c, chain in enumerate(spec.chains)],
    }


def _chain_config(spec: Spec, chain: ChainSpec, where: str, placeholder_core: int) -> dict:
    """A chain for the data plane: its NFs in topological order (a line keeps its order) and, for a graph, its edges."""
    nodes = chain_nodes(chain)
    edges = chain_edges(chain, where)
    position = {nf.name: n for n, nf in enumerate(nodes)}
    order = topological_order([nf.name for nf in nodes], edges)
    config = {
        "name": chain.name,
        "ring_capacity": chain.ring_capacity or spec.ring_capacity,
        "traffic": _resolved_traffic(spec, chain),
        "nfs": [_nf_config(nodes[position[name]], chain, placeholder_core, node_where(chain, where, position[name])) for name in order],
    }
    if kernel_io_nodes(chain):  # each NF's config says which of them are kernel-I/O
        config["io"] = {"kind": "kernel", "mux": chain.mux or 1, "link": chain.link or "b2b"}
    if chain.graph is not None:
        config["edges"] = [{"from": e.source, "to": e.target, "spec_path": e.where} | ({"label": e.label} if e.label else {})
                           for e in edges]
    if any(nf.scale for nf in nodes):
        _add_instances(config, nodes, edges)
    return config


def _add_instances(config: dict, nodes: list[NfSpec], edges: list[Edge]) -> None:
    """A scaled NF's instances as NFs of their own, each right after the one before (the data plane keeps the
    topological order), with a copy of every edge into and out of it; the data plane's autoscaler decides how
    many take flows."""
    by_name = {nf.name: nf for nf in nodes}
    expanded = []
    for nf_config in config["nfs"]:
        nf = by_name[nf_config["name"]]
        if not nf.scale:
            expanded.append(nf_config)
            continue
        rule = nf.scale.model_dump(exclude={"max_instances", "cores"})
        expanded.append(nf_config | {"scale_group": nf.name, "instance": 1, "scale": rule})
        extra_cores = nf.scale.cores or []
        for k, name in enumerate(instance_names(nf)[1:]):
            # No core given: its NF's, until the pipeline finds one with more headroom (controlplane/spare_cores.py).
            given = k < len(extra_cores)
            core = extra_cores[k] if given else nf_config["core"]
            expanded.append(nf_config | {"name": name, "core": core, "scale_group": nf.name, "instance": k + 2}
                            | ({} if given else {"core_open": True}))
    config["nfs"] = expanded
    instances = {nf.name: instance_names(nf) for nf in nodes}
    config["edges"] = [{"from": source, "to": target, "spec_path": e.where} | ({"label": e.label} if e.label else {})
                       for e in edges for source in instances[e.source] for target in instances[e.target]]
