"""The spec's typed models: chains, NFs, traffic and scheduler, each field checked as pydantic reads it."""

from __future__ import annotations

import math
import re
import sys
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, JsonValue, field_validator, model_validator

from controlplane.spec.http_traffic import url_problem
from controlplane.spec.limits import (
    MAX_FRAME,
    MAX_RATE_PPS,
    MAX_RING,
    MIN_FRAME,
    MIN_STEP_SECONDS,
    bounded_by,
)
from controlplane.spec.port_models import ChainSource, LabSpec, PortSpec
from controlplane.spec.strict_model import Strict

_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgG]?)pps\s*$")
_RATE_SCALE = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}


def _json_numbers(value: JsonValue) -> JsonValue:
    """NF args and scheduler options go to the data plane as JSON, which reads no integer beyond a double's range."""
    if isinstance(value, int) and abs(value) > sys.float_info.max:
        raise ValueError(f"must be within ±1.8e308, the data plane's range; got a number of {value.bit_length()} bits")
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        _json_numbers(item)
    return value


# JSON values only: dates, sets, binary data, inf and nan have no JSON, and huge integers no reader.
DataPlaneValue = Annotated[JsonValue, AfterValidator(_json_numbers)]


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
            raise ValueError(
                f"malicious and other are shares of the flows: together at most 1, got {self.malicious + self.other:g}"
            )
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

    rate: float | str | None = None
    # Rates that follow one another every `step_seconds`, cycling (0 = no traffic): load that changes over time.
    rate_steps: list[float | str] | None = None
    step_seconds: float | None = Field(default=None, gt=0, le=3600)
    size: int | str | list[SizeWeight] | None = None
    flows: int | None = Field(default=None, ge=1, le=1 << 20)
    protocol: str | None = None
    # IPv4 or IPv6 frames; IPv6 carries each flow's IPv4 addresses in the last 32 bits of 2001:db8:: (source) and
    # 2001:db8:1:: (destination). 4 by default.
    ip_version: Literal[4, 6] | None = None
    # An 802.1Q tag with this VLAN id on every frame; untagged by default.
    vlan: int | None = Field(default=None, ge=1, le=4094)
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
                steps.append(
                    _packets_per_second(
                        step, "a number of packets per second or like '2.5 Mpps' (0 = none)", allow_zero=True
                    )
                )
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
            raise ValueError(
                f"must be a frame size in bytes, 'datacenter', or a list of {{size, weight}}, got {value!r}"
            )
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
    # model where the machine has more than one, else the NF's own (controlplane/planning/spare_cores.py).
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
    batch: bounded_by("max_burst", 16) | None = None
    # More instances of the NF as its input drops (ScaleSpec); none by default.
    scale: ScaleSpec | None = None
    # dpdk | kernel: how this NF moves packets, where a chain mixes them (SCC's kernel-I/O NFs beside DPDK NFs);
    # by default its chain's `io`. A link is a veth where an NF at either end is kernel-I/O, a ring otherwise.
    io: Literal["dpdk", "kernel"] | None = None
    # What the runtime does when the NF's process dies while traffic runs: restart it under its name, its rings and
    # counters kept (always; on-failure: unless it exited cleanly, with a back-off), or end the run naming it (never).
    restart: Literal["never", "on-failure", "always"] = "never"


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
    # Real traffic: the port (or lab host) the chain takes its packets from, and the one its output leaves by;
    # without them, the generator and the sink.
    source: str | ChainSource | None = Field(default=None, alias="from")
    to: str | None = Field(default=None, min_length=1)
    nfs: list[NfSpec] | None = None  # a line: each NF feeds the next
    graph: GraphSpec | None = None  # or a graph: nodes, and edges between them
    ring_capacity: int | None = Field(default=None, le=MAX_RING)
    traffic: Traffic = Field(default_factory=Traffic)
    weight: float = Field(default=1.0, gt=0, le=1e6)  # priority weight of every NF of the chain
    # dpdk: NFs linked by rings in hugepage memory. kernel: each NF in its own network namespace, reading and
    # writing packet sockets on veths (SCC's kernel-I/O NFs), `mux` frames per system call (1: recvfrom/sendto per
    # frame; more: recvmmsg/sendmmsg), linked back to back (b2b) or through a switch: a Linux bridge, Open vSwitch's
    # kernel datapath (ovs) or its userspace datapath (ovs-userspace).
    io: Literal["dpdk", "kernel"] = "dpdk"
    mux: bounded_by("max_kernel_mux", 1) | None = None
    link: Literal["b2b", "bridge", "ovs", "ovs-userspace"] | None = None


class SchedulerSpec(Strict):
    name: str
    options: dict[str, DataPlaneValue] = Field(default_factory=dict)


class Spec(Strict):
    name: str = "tandem"
    description: str = ""
    control_core: int = Field(default=0, ge=0)
    burst: bounded_by("max_burst", 1) = 32
    # Pipelined prefetching (μNF, Sec. V-B): while an NF works on packet i of a batch, packet i + prefetch's first
    # data cache line is fetched; 0 turns it off (bench/micronf_experiments.py fig7 measures what it is worth).
    prefetch: bounded_by("max_burst", 0) = 0
    ring_capacity: int = Field(default=2048, le=MAX_RING)
    # Seconds of traffic. Left out: 5, or, where chains take traffic from ports, until Ctrl-C (a lab: until its
    # clients are done).
    duration: float | None = Field(default=None, gt=0, le=3600)
    warmup: float = Field(default=0.5, ge=0, le=600)
    traffic: Traffic = Field(default_factory=Traffic)
    scheduler: SchedulerSpec = Field(default_factory=lambda: SchedulerSpec(name="coop"))
    # Options for the other schedulers a comparison runs (`compare --schedulers`), by scheduler name.
    scheduler_options: dict[str, dict[str, DataPlaneValue]] = Field(default_factory=dict)
    chains: list[ChainSpec]
    ports: list[PortSpec] = Field(default_factory=list)
    lab: LabSpec | None = None
    # spec: every NF's core is given; auto: Bubble's placement solver chooses cores and initial batch sizes, for the
    # most weighted throughput; fewest_cores: μNF-MC, every chain at its rate on as few cores as carry it, consecutive
    # μNFs that pass the most traffic together (controlplane/planning/placement.py).
    placement: Literal["spec", "auto", "fewest_cores"] = "spec"
    placement_cores: list[int] | None = None  # cores the solver may use; default: every core but the control core

    @field_validator("scheduler", mode="before", json_schema_input_type=str | SchedulerSpec)
    @classmethod
    def _scheduler(cls, value):
        return {"name": value} if isinstance(value, str) else value  # `scheduler: cfs` is short for {name: cfs}

    @model_validator(mode="after")
    def _default_duration(self):
        if self.duration is None and not self.fed_by_ports():
            self.duration = 5.0
        return self

    def fed_by_ports(self) -> bool:
        """Whether some chain takes its traffic from a port or lab host instead of the generator."""
        return any(chain.source is not None for chain in self.chains)


def traffic_field(spec: Spec, chain: ChainSpec, field: str, default):
    """A traffic field of a chain: its own, else the spec's top-level one, else `default`."""
    for block in (chain.traffic, spec.traffic):
        if getattr(block, field) is not None:
            return getattr(block, field)
    return default
