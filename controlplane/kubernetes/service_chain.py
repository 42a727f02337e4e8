"""The ServiceChain resource's spec and status as pydantic models, built from the spec's own models: one source of
truth for `./tandem run`, the JSON Schema and the CRD (controlplane/kubernetes/crd.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from controlplane.sfc.sfc_request import SfcGraph
from controlplane.spec.models import ChainSpec, SchedulerSpec, Traffic
from controlplane.spec.strict_model import Strict


class ChainPort(Strict):
    """A port of the resource's chains: an interface on one node (a lab host's veth, a VM's tap, a NIC's kernel
    interface) whose frames its chains take (`from`) or send (`to`); that node's agent opens it with DPDK's
    net_af_packet, so the chain's first NF runs on the node of its `from` port and its last on that of its `to`."""

    # Short: on an agent it takes the resource's digest and the placement's nonce before it (32 characters in all).
    name: str = Field(min_length=1, max_length=14, pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
    node: str = Field(min_length=1, max_length=253)  # the Kubernetes Node
    interface: str = Field(min_length=1, max_length=15, pattern=r"^[A-Za-z0-9_.-]+$")  # IFNAMSIZ - 1
    # Frames no chain of the port handles (ARP, IPv6 neighbour discovery): passed to the port its chain sends to
    # (across a wire too), or dropped and counted.
    unhandled: Literal["pass", "drop"] = "pass"


class ServiceChainSpec(Strict):
    """Chains of NFs as a spec's `chains` (lines or graphs), or one SFC request of VNF templates (`sfc`), to be
    placed across the cluster's Tandem nodes."""

    chains: list[ChainSpec] | None = Field(default=None, min_length=1, max_length=64)
    sfc: SfcGraph | None = None
    traffic: Traffic = Field(default_factory=Traffic)  # every chain's, where a chain names none (as in a spec)
    scheduler: SchedulerSpec | None = None  # on every node the chain uses; left out: auto
    placement: Literal["fewest_cores", "throughput"] = "fewest_cores"
    # Where real traffic comes from and goes to (a chain's `from` and `to`); a chain without them takes the
    # generator's packets (its `traffic`) and delivers to the sink. A chain fed by a port still gives its
    # traffic's rate: the rate placement plans it for.
    ports: list[ChainPort] = Field(default_factory=list, max_length=64)

    @model_validator(mode="after")
    def _one_kind_of_chain(self) -> ServiceChainSpec:
        if (self.chains is None) == (self.sfc is None):
            raise ValueError("give chains (a spec's chains) or sfc (an SFC request), exactly one of them")
        return self

    @model_validator(mode="after")
    def _ports_named(self) -> ServiceChainSpec:
        names = [port.name for port in self.ports]
        if len(set(names)) != len(names):
            raise ValueError(f"ports: port {next(n for n in names if names.count(n) > 1)!r} is given twice")
        if self.ports and self.sfc is not None:
            raise ValueError("ports: an SFC request's chains take the generator's traffic; give chains for ports")
        for chain in self.chains or []:
            source = chain.source if isinstance(chain.source, str) or chain.source is None else chain.source.port
            for end, port in (("from", source), ("to", chain.to)):
                if port is not None and port not in names:
                    raise ValueError(
                        f"chains: chain {chain.name}'s {end} names port {port!r}, which ports does not give"
                    )
        return self


class Condition(Strict):
    """A Kubernetes condition (metav1.Condition's fields)."""

    type: str = Field(min_length=1, max_length=316)
    status: Literal["True", "False", "Unknown"]
    reason: str = Field(min_length=1, max_length=1024, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
    message: str = Field(default="", max_length=32768)
    lastTransitionTime: str = Field(min_length=1)  # RFC 3339
    observedGeneration: int | None = Field(default=None, ge=0)


class NfPlacement(Strict):
    nf: str = Field(min_length=1)
    node: str = Field(min_length=1)
    core: int = Field(ge=0)
    coreShare: float | None = Field(default=None, ge=0, le=1)  # of its core, at its planned rate (cores are shared)


class HopStatus(Strict):
    """One hop of a chain: a ring between two NFs on a node, or the wire between two nodes (`node: wire`)."""

    source: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)
    node: str = Field(min_length=1)
    rateMpps: float = Field(ge=0)
    dropped: int = Field(ge=0)
    latencyP50Us: float | None = Field(default=None, ge=0)
    latencyP99Us: float | None = Field(default=None, ge=0)
    # A wire's mean one-way delay, from the sender's CLOCK_REALTIME stamps read against the receiver's clock: a skew
    # between the two hosts' clocks adds to it, and may take it below zero.
    delayUs: float | None = None


class ServiceChainStatus(Strict):
    conditions: list[Condition] = Field(default_factory=list)
    placement: list[NfPlacement] = Field(default_factory=list)
    hops: list[HopStatus] = Field(default_factory=list)
    observedGeneration: int | None = Field(default=None, ge=0)
    # Seconds from finding a node it used lost to its chains placed and running again (the last such heal).
    healSeconds: float | None = Field(default=None, ge=0)
