"""The spec file: typed models of chains, NFs, traffic and scheduler, loaded from YAML with located errors."""
from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from controlplane.errors import SpecError

# The papers' data-centre traffic: a bimodal mix around 200 B and 1400 B (UNiS Fig. 8, after Benson et al.).
DATACENTER_MIX = [(64, 5), (180, 15), (200, 20), (220, 10), (1380, 15), (1400, 25), (1420, 10)]
MIN_FRAME, MAX_FRAME = 64, 1518
MAX_HOPS = 24  # hop record size in the packet metadata (dataplane/packet_meta.h)
MAX_NFS = 128  # stats zone slots (dataplane/shm_layout.h)
MAX_BURST = 1024
MAX_RING = 1 << 22  # slots; the mbuf pool is sized from the rings, and hugepages from the pool
MAX_RATE_PPS = 1e10  # far above any core's reach; larger numbers are typos, and overflow the generator's pacing
MAX_SPEC_BYTES = 10 << 20
MAX_ALIASES = 100  # a spec needs a few; an alias bomb (each level doubling the last) needs many

_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgG]?)pps\s*$")
_RATE_SCALE = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}


class Strict(BaseModel):
    # No inf or nan anywhere: `.inf` passes a `gt=0` bound, and would reach the data plane as a weight or a rate.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class SizeWeight(Strict):
    size: int = Field(ge=MIN_FRAME, le=MAX_FRAME)
    weight: float = Field(gt=0)


def _packets_per_second(value, expected: str, allow_zero: bool) -> float:
    if isinstance(value, bool):
        raise ValueError(f"must be {expected}")
    if isinstance(value, (int, float)):
        pps = float(value)
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


class Traffic(Strict):
    """What the generator offers a chain. Fields left out fall back to the spec's top-level traffic."""

    rate: Union[float, str, None] = None
    # Rates that follow one another every `step_seconds`, cycling (0 = no traffic): load that changes over time.
    rate_steps: Union[list[Union[float, str]], None] = None
    step_seconds: float | None = Field(default=None, gt=0, le=3600)
    size: Union[int, str, list[SizeWeight], None] = None
    flows: int | None = Field(default=None, ge=1, le=1 << 20)
    protocol: str | None = None

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

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, value):
        if isinstance(value, bool):
            raise ValueError("must be a frame size in bytes, 'datacenter', or a list of {size, weight}")
        if isinstance(value, int) and not MIN_FRAME <= value <= MAX_FRAME:
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


class NfSpec(Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    type: str
    core: int | None = Field(default=None, ge=0)  # required unless the spec has placement: auto
    args: dict[str, Any] = Field(default_factory=dict)
    # Cycles per packet, overriding the cycle estimator (schedulers that need costs: unis).
    cost_cycles: float | None = Field(default=None, gt=0, le=1e9)
    # Priority weight for schedulers that share CPU by weight (nfvnice); multiplied by the chain's.
    weight: float = Field(default=1.0, gt=0, le=1e6)
    # Initial batch size for bubble (a multiple of 16); by default from the offered rates.
    batch: int | None = Field(default=None, ge=16, le=MAX_BURST)


class ChainSpec(Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    nfs: list[NfSpec]
    ring_capacity: int | None = Field(default=None, le=MAX_RING)
    traffic: Traffic = Field(default_factory=Traffic)
    weight: float = Field(default=1.0, gt=0, le=1e6)  # priority weight of every NF of the chain


class SchedulerSpec(Strict):
    name: str
    options: dict[str, Any] = Field(default_factory=dict)


class Spec(Strict):
    name: str = "tandem"
    description: str = ""
    control_core: int = Field(default=0, ge=0)
    burst: int = Field(default=32, ge=1, le=MAX_BURST)
    ring_capacity: int = Field(default=2048, le=MAX_RING)
    duration: float = Field(default=5.0, gt=0, le=3600)
    warmup: float = Field(default=0.5, ge=0, le=600)
    traffic: Traffic = Field(default_factory=Traffic)
    scheduler: SchedulerSpec = Field(default_factory=lambda: SchedulerSpec(name="coop"))
    # Options for the other schedulers a comparison runs (`compare --schedulers`), by scheduler name.
    scheduler_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    chains: list[ChainSpec]
    # spec: every NF's core is given; auto: Bubble's placement solver chooses cores and initial batch sizes.
    placement: Literal["spec", "auto"] = "spec"
    placement_cores: list[int] | None = None  # cores the solver may use; default: every core but the control core

    @field_validator("scheduler", mode="before")
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
        path = _location(item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            # The unknown key is the user's own text, not a union branch: named whatever it looks like.
            key, parent = item["loc"][-1], _location(item["loc"][:-1])
            path = f"{parent}.{key}" if parent and _FIELD_NAME.match(str(key)) else (str(key) if not parent and _FIELD_NAME.match(str(key)) else f"{parent}[{key!r}]")
            message = "unknown field"
        elif item["type"] == "missing":
            message = "is required"
        problems.setdefault(path, message)  # a union reports once per branch; the first says enough
    return list(problems.items())


def usable_cores() -> set[int]:
    return set(os.sched_getaffinity(0))


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
        if not chain.nfs:
            problems.append((f"{where}.nfs", f"chain {chain.name!r} is empty: give it at least one NF"))
        if len(chain.nfs) > MAX_HOPS:
            problems.append((f"{where}.nfs", f"a chain has at most {MAX_HOPS} NFs, got {len(chain.nfs)}"))
        total_nfs += len(chain.nfs)
        for n, nf in enumerate(chain.nfs):
            nf_where = f"{where}.nfs[{n}]"
            check_unique("NF", nf.name, nf_where)
            if nf.core is None:
                if spec.placement != "auto":
                    problems.append((f"{nf_where}.core", "is required (or let the solver choose: placement: auto)"))
            elif nf.core not in cores:
                problems.append((f"{nf_where}.core", f"core {nf.core} does not exist on this machine (cores: {sorted(cores)})"))
            elif nf.core == spec.control_core:
                problems.append((f"{nf_where}.core", f"core {nf.core} is the control core (generator, sink, scheduler); pin NFs elsewhere"))
    for p, core in enumerate(spec.placement_cores or []):
        if core not in cores:
            problems.append((f"placement_cores[{p}]", f"core {core} does not exist on this machine (cores: {sorted(cores)})"))
        elif core == spec.control_core:
            problems.append((f"placement_cores[{p}]", f"core {core} is the control core; NFs go elsewhere"))
    if spec.placement == "auto" and spec.placement_cores == []:
        problems.append(("placement_cores", "is empty: the solver needs at least one core"))
    if total_nfs > MAX_NFS:
        problems.append(("chains", f"at most {MAX_NFS} NFs in all, got {total_nfs}"))
    return problems


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader, stricter where a spec needs it: a key given twice is an error (PyYAML keeps the last
    silently), and a document with more aliases than a spec could need is refused (an alias bomb expands to
    billions of nodes in whatever walks it)."""

    def __init__(self, stream):
        super().__init__(stream)
        self.aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_ALIASES} aliases (*name): refused, a spec needs few")
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} is given twice (first on line {seen[key] + 1})", key_node.start_mark)
                seen[key] = key_node.start_mark.line
            except TypeError:
                pass  # an unhashable key: the base class says so
        return super().construct_mapping(node, deep)


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
    try:
        spec = Spec.model_validate(document)
    except ValidationError as error:
        raise SpecError(source, _pydantic_problems(error)) from None
    except RecursionError:
        raise SpecError(source, [("", "a value is nested too deeply")]) from None
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
    return {
        "rate_pps": 0.0 if rate == "max" else float(rate),
        "rate_steps_pps": pick("rate_steps", []),
        "step_seconds": pick("step_seconds", 1.0),
        "sizes": sizes,
        "flows": pick("flows", 64),
        "protocol": pick("protocol", "udp"),
    }


def placement_cores(spec: Spec) -> list[int]:
    if spec.placement_cores is not None:
        return sorted(set(spec.placement_cores))
    return sorted(usable_cores() - {spec.control_core})


def _nf_config(nf: NfSpec, chain: ChainSpec, placeholder_core: int) -> dict:
    # Until the solver has placed it, an NF of an auto-placed spec sits on the first placement core.
    config = {"name": nf.name, "type": nf.type, "core": nf.core if nf.core is not None else placeholder_core, "args": nf.args, "weight": nf.weight * chain.weight}
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
        "duration": duration if duration is not None else spec.duration,
        "warmup": spec.warmup,
        "scheduler": chosen,
        "chains": [
            {
                "name": chain.name,
                "ring_capacity": chain.ring_capacity or spec.ring_capacity,
                "traffic": _resolved_traffic(spec, chain),
                "nfs": [_nf_config(nf, chain, placeholder) for nf in chain.nfs],
            }
            for chain in spec.chains
        ],
    }
