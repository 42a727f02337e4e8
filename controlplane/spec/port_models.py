"""The spec's models of where real traffic comes from and goes to: ports (DPDK devices, or VXLANs Tandem makes), the
port a chain takes from, and the lab's hosts."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, field_validator, model_validator

from controlplane.spec.strict_model import Strict


class VxlanSpec(Strict):
    """A VXLAN interface Tandem makes for a port (and removes when it stops): the link to another Tandem node, whose
    port is a VXLAN of the same VNI with the addresses the other way round."""

    vni: int = Field(ge=1, le=16_777_215)
    remote: str = Field(min_length=2, max_length=45)  # the other node's address (IPv4 or IPv6)
    local: str | None = Field(default=None, min_length=2, max_length=45)  # by default, the route to `remote` says
    dstport: int = Field(default=4789, ge=1, le=65535)  # UDP, on both nodes (IANA's VXLAN port by default)
    # The network namespace (`ip netns`) whose addresses carry the tunnel; the interface itself comes to Tandem's.
    # By default Tandem's own (a node agent on the host's network).
    namespace: str | None = Field(default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

    @field_validator("remote", "local")
    @classmethod
    def _an_address(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                address = ipaddress.ip_address(value)
            except ValueError:
                raise ValueError(f"not an IPv4 or IPv6 address: {value!r}") from None
            if address.is_multicast or address.is_unspecified:
                raise ValueError(f"{value} is not one node's address (a unicast address is)")
        return value


class PortSpec(Strict):
    """A DPDK device the chains take traffic from or send it to (controlplane/spec/ports.py checks it)."""

    name: str = Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_.-]+$")
    # A PCI address bound to a DPDK driver ("0000:3b:00.0"), or a virtual device: a DPDK driver's name, a number,
    # and its arguments ("net_af_packet0,iface=veth1", "net_tap0,iface=tdm0", "net_pcap0,rx_pcap=in.pcap").
    device: str | None = Field(default=None, min_length=1, max_length=512, pattern=r"^[A-Za-z0-9_.,:=/+@-]+$")
    # Or a VXLAN that Tandem makes and opens with net_af_packet (a wire unless `wire: false`): what a node agent
    # asks for when a chain goes on to another node.
    vxlan: VxlanSpec | None = None
    # Frames no chain of the port handles (not IP, IPv6 neighbour discovery, a source no chain takes): passed
    # untouched to the port its chain sends to (a bump in the wire: the hosts on either side still find each
    # other), or dropped and counted.
    unhandled: Literal["pass", "drop"] = "pass"
    # The port is a link to another Tandem node (a VXLAN or Geneve interface between nodes, the other node's port
    # `wire` too): frames leave numbered, with a 20-byte trailer the other end takes off, so that what one node sent
    # = what the other received + what the wire lost (gaps in the numbers) + what was still on the wire.
    wire: bool = False

    @model_validator(mode="before")
    @classmethod
    def _vxlan_is_a_wire(cls, data):
        if isinstance(data, dict) and "vxlan" in data and "wire" not in data:
            return data | {"wire": True}
        return data

    @model_validator(mode="after")
    def _device_or_vxlan(self) -> PortSpec:
        if (self.device is None) == (self.vxlan is None):
            raise ValueError("give the port's device, or a vxlan for Tandem to make: exactly one of them")
        return self


class ChainSource(Strict):
    """Where a chain's traffic comes from: a port (or lab host), and the source prefixes it takes there when several
    chains share the port."""

    port: str = Field(min_length=1)
    source: list[str] | None = Field(default=None, min_length=1)


class LabCommand(Strict):
    """A command a lab host runs; `{host}` in it is that host's address."""

    command: str = Field(min_length=1, max_length=4096)
    time_limit: float = Field(default=30.0, gt=0, le=3600)  # seconds; then it is stopped and counted as timed out
    # What the command's exit status should be: success (0), or failure (e.g. a request a firewall drops).
    expect: Literal["success", "failure"] = "success"


def _commands(value):
    """`run: [ping -c 3 {server}]` is short for `run: [{command: ping -c 3 {server}}]`."""
    if isinstance(value, list):
        return [{"command": item} if isinstance(item, str) else item for item in value]
    return value


class LabHost(Strict):
    """A host of the lab: a network namespace with one interface, joined to Tandem by a veth, and its commands."""

    name: str = Field(min_length=1, max_length=15, pattern=r"^[a-z][a-z0-9-]*$")
    address: str | None = None  # with its prefix length; by default the next free address of the lab's subnet
    serve: list[LabCommand] = Field(default_factory=list)  # started first, stopped when the clients are done
    run: list[LabCommand] = Field(default_factory=list)  # the clients, one after another

    @field_validator("serve", "run", mode="before", json_schema_input_type=list[str | LabCommand])
    @classmethod
    def _short_commands(cls, value):
        return _commands(value)


class LabSpec(Strict):
    """Real applications as traffic: hosts in network namespaces that Tandem makes and removes; each host is also a
    port the chains name (`from: client`, `to: server`)."""

    # The benchmarking range (RFC 2544), never the machine's own network.
    subnet: str = "198.18.0.0/24"
    hosts: list[LabHost] = Field(min_length=1, max_length=16)
    # The folder the commands run in (relative paths in them start there); by default the spec's own.
    directory: str | None = Field(default=None, min_length=1)
