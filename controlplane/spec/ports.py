"""The spec's ports and lab, checked: every chain's `from` and `to` name a port or lab host, devices and interfaces
exist, shared ports tell their chains apart, and every lab command can run here."""

from __future__ import annotations

import hashlib
import ipaddress
import re
from pathlib import Path

from controlplane.errors import SpecError
from controlplane.machine import lab_commands, vxlan_links
from controlplane.spec.models import Spec
from controlplane.spec.port_models import ChainSource, LabSpec, PortSpec, VxlanSpec

_PCI = re.compile(r"^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
# Drivers a PCI device must be bound to for DPDK to drive it (dpdk-devbind.py's list).
DPDK_PCI_DRIVERS = ("vfio-pci", "uio_pci_generic", "igb_uio")
# The virtual devices Debian's DPDK ships and a run can use as a port; the device's name is the driver's plus a
# suffix of the user's ("net_af_packet0", "net_tap_left").
VIRTUAL_DRIVERS = ("net_af_packet", "net_af_xdp", "net_tap", "net_memif", "net_pcap", "net_ring", "net_null")
# Drivers whose `iface` is an interface that must exist already (net_tap makes its own).
_ATTACHES_TO_INTERFACE = ("net_af_packet", "net_af_xdp")


# A lab no chain takes traffic from: a run's lab would carry nothing; a service's carries what chains added live take.
IDLE_LAB = ("lab", "no chain takes its traffic from a lab host (from: HOST): the lab would carry nothing")


def lab_port_name(lab_host: int) -> str:
    """The root end of lab host `lab_host`'s veth: the interface the data plane opens as its port."""
    return f"tdl{lab_host}"


# Frames each lab port's packet ring holds (2 KiB each). DPDK's default of 512 is 2 ms of a 3 Gbit/s TCP transfer: a
# longer pause of the manager's loop and the kernel drops what comes (kernel_ring_drops; 9,591 of 717,156 frames in
# an iperf3 run through lab-firewalls, all retransmitted). 4096 (8 MiB a ring) dropped none in the same runs.
LAB_RING_FRAMES = 4096


# The trailer a wire port adds to each frame (dataplane/ports/wire/link_trailer.h), and the largest packet a chain
# sends (a lab host's, an Ethernet MTU): the link's interface must carry both.
LINK_TRAILER_BYTES = 20
LARGEST_PACKET = 1500


def port_config(port: PortSpec, spec_path: str) -> dict:
    """A spec's port as the run config has it: its device (for a `vxlan` port, net_af_packet on the interface Tandem
    makes, whose making the config's `vxlan` describes)."""
    config = {"name": port.name, "unhandled": port.unhandled, "wire": port.wire, "spec_path": spec_path}
    if port.vxlan is None:
        return config | {"device": port.device}
    interface = vxlan_links.interface_name(port.name)
    digest = hashlib.sha256(port.name.encode()).hexdigest()[:8]  # DPDK's device names take no '-' or '.'
    device = f"net_af_packet_vx{digest},iface={interface},framecnt={LAB_RING_FRAMES}"
    # Its MTU carries a full packet and the wire's trailer (a VXLAN's default, 1450, would not).
    made = {"interface": interface, "mtu": LARGEST_PACKET + LINK_TRAILER_BYTES}
    return config | {"device": device, "vxlan": port.vxlan.model_dump() | made}


def lab_device(lab_host: int) -> str:
    return f"net_af_packet_lab{lab_host},iface={lab_port_name(lab_host)},framecnt={LAB_RING_FRAMES}"


def source_of(spec_source: str | ChainSource | None) -> ChainSource | None:
    """A chain's `from`, the short form (a port's name) made whole."""
    return ChainSource(port=spec_source) if isinstance(spec_source, str) else spec_source


def port_names(spec: Spec) -> dict[str, str]:
    """Every port's name (the spec's ports, then the lab's hosts) and where the spec gives it."""
    names = {port.name: f"ports[{p}]" for p, port in enumerate(spec.ports)}
    for h, host in enumerate(spec.lab.hosts if spec.lab else []):
        names.setdefault(host.name, f"lab.hosts[{h}]")
    return names


def lab_addresses(lab: LabSpec) -> list[str]:
    """Each host's address with its prefix length: its own, or the next free one of the lab's subnet."""
    subnet = ipaddress.ip_network(lab.subnet, strict=False)
    given = {ipaddress.ip_interface(host.address).ip for host in lab.hosts if host.address and _interface(host.address)}
    free = (address for address in subnet.hosts() if address not in given)
    return [host.address or f"{next(free, subnet.network_address)}/{subnet.prefixlen}" for host in lab.hosts]


def _interface(text: str) -> bool:
    try:
        ipaddress.ip_interface(text)
        return True
    except ValueError:
        return False


def device_problem(device: str) -> str | None:
    """Why DPDK could not open `device` on this machine, in words that say what to do; None if it looks fine."""
    if _PCI.match(device):
        address = device if device.count(":") == 2 else f"0000:{device}"
        sysfs = Path("/sys/bus/pci/devices") / address.lower()
        if not sysfs.exists():
            return f"no PCI device {device} on this machine (lspci lists them)"
        driver = (sysfs / "driver").resolve().name if (sysfs / "driver").exists() else None
        if driver not in DPDK_PCI_DRIVERS:
            bound = f"bound to {driver}" if driver else "bound to no driver"
            return (
                f"PCI device {device} is {bound}, not to a DPDK driver: bind it first, e.g. "
                f"modprobe vfio-pci && dpdk-devbind.py --bind=vfio-pci {device}"
            )
        return None
    name = device.partition(",")[0]
    driver = next((known for known in VIRTUAL_DRIVERS if name.startswith(known)), None)
    if driver is None:
        return (
            f"{name!r} is neither a PCI address (like 0000:3b:00.0) nor a virtual device this DPDK has "
            f"({', '.join(VIRTUAL_DRIVERS)}, each followed by a number or name of yours, "
            "e.g. net_af_packet0,iface=eth1)"
        )
    options = _device_options(device)
    if driver in _ATTACHES_TO_INTERFACE:
        interface = options.get("iface")
        if not interface:
            return f"{driver} needs the interface it attaches to: {name},iface=NAME"
        if not Path(f"/sys/class/net/{interface}").exists():
            return f"there is no interface {interface} on this machine (ip link lists them)"
    if driver == "net_pcap":
        for key in ("rx_pcap",):
            if key in options and not Path(options[key]).is_file():
                return f"{key}: no such capture file {options[key]}"
    return None


def _device_options(device: str) -> dict[str, str]:
    """A virtual device's arguments ("net_af_packet0,iface=eth1,framecnt=4096": iface and framecnt)."""
    arguments = device.partition(",")[2]
    return dict(item.partition("=")[::2] for item in arguments.split(",") if item)


def _wire_problem(device: str) -> str | None:
    """Why a wire port's interface cannot carry a full packet with the link trailer: its MTU; None if it can (or
    its MTU is not for this machine to read, as a PCI device's)."""
    interface = _device_options(device).get("iface")
    mtu_file = Path(f"/sys/class/net/{interface}/mtu") if interface else None
    if mtu_file is None or not mtu_file.exists():
        return None
    mtu = int(mtu_file.read_text())
    needed = LARGEST_PACKET + LINK_TRAILER_BYTES
    if mtu >= needed:
        return None
    return (
        f"{interface}'s MTU is {mtu}: a {LARGEST_PACKET}-byte packet with the {LINK_TRAILER_BYTES}-byte link trailer "
        f"needs {needed} (ip link set {interface} mtu {needed}; a VXLAN's underlay then needs {needed + 50})"
    )


def vxlan_problems(port_name: str, vxlan: VxlanSpec) -> list[tuple[str, str]]:
    """Why Tandem could not make port `port_name`'s VXLAN here: (the field under `vxlan`, why); none if it can."""
    problems = []
    if vxlan.namespace is not None and not (Path("/run/netns") / vxlan.namespace).exists():
        problems.append((".namespace", f"there is no network namespace {vxlan.namespace} (ip netns lists them)"))
    if (
        vxlan.local is not None
        and ipaddress.ip_address(vxlan.local).version != ipaddress.ip_address(vxlan.remote).version
    ):
        problems.append((".local", f"{vxlan.local} and remote {vxlan.remote} are not of one IP version"))
    interface = vxlan_links.interface_name(port_name)
    if Path(f"/sys/class/net/{interface}").exists():
        problems.append(("", f"an interface {interface} exists already: it is another port's, or left by hand"))
    return problems


def _command_problems(lab: LabSpec, addresses: list[str]) -> list[tuple[str, str]]:
    """Each command's placeholders name hosts, and its program is installed here (lab_commands.check)."""
    hosts = [
        {
            "name": host.name,
            "address": address,
            **{
                role: [
                    {"command": command.command, "spec_path": f"lab.hosts[{h}].{role}[{k}].command"}
                    for k, command in enumerate(getattr(host, role))
                ]
                for role in ("serve", "run")
            },
        }
        for h, (host, address) in enumerate(zip(lab.hosts, addresses, strict=True))
    ]
    try:
        lab_commands.check({"hosts": hosts})
    except SpecError as error:
        return error.problems
    return []


def _lab_problems(lab: LabSpec) -> list[tuple[str, str]]:
    problems = []
    try:
        subnet = ipaddress.ip_network(lab.subnet, strict=False)
    except ValueError:
        return [("lab.subnet", f"not an IP network: {lab.subnet!r}")]
    seen: dict[str, str] = {}
    for h, host in enumerate(lab.hosts):
        where = f"lab.hosts[{h}]"
        if host.name in seen:
            problems.append((f"{where}.name", f"duplicate lab host {host.name!r} (also {seen[host.name]})"))
        seen.setdefault(host.name, where)
        if host.address is not None and (not _interface(host.address) or "/" not in host.address):
            problems.append((f"{where}.address", f"not an address with its prefix length: {host.address!r}"))
        if not host.serve and not host.run:
            problems.append((where, f"lab host {host.name!r} has no command: give it serve or run commands"))
    if problems:
        return problems
    if len(lab.hosts) > subnet.num_addresses - 2:
        return [("lab.subnet", f"{lab.subnet} has too few addresses for {len(lab.hosts)} hosts")]
    if lab.directory is not None and not Path(lab.directory).is_dir():
        problems.append(("lab.directory", f"no such folder: {lab.directory}"))
    if not any(host.run for host in lab.hosts):
        problems.append(("lab.hosts", "no host runs a client (run:): the lab would never end"))
    return problems + _command_problems(lab, lab_addresses(lab))


def port_problems(spec: Spec) -> list[tuple[str, str]]:
    problems = []
    names = {}
    for p, port in enumerate(spec.ports):
        if port.name in names:
            problems.append((f"ports[{p}].name", f"duplicate port name {port.name!r} (also {names[port.name]})"))
        names.setdefault(port.name, f"ports[{p}]")
        if port.vxlan is not None:
            problems += [
                (f"ports[{p}].vxlan{path}", problem) for path, problem in vxlan_problems(port.name, port.vxlan)
            ]
        elif problem := device_problem(port.device):
            problems.append((f"ports[{p}].device", problem))
        elif port.wire and (problem := _wire_problem(port.device)):
            problems.append((f"ports[{p}].wire", problem))
    vnis: dict[tuple, str] = {}
    for p, port in enumerate(spec.ports):
        if port.vxlan is not None:
            key = (port.vxlan.namespace, port.vxlan.dstport, port.vxlan.vni)
            if key in vnis:
                problems.append(
                    (f"ports[{p}].vxlan.vni", f"VNI {port.vxlan.vni} on UDP port {port.vxlan.dstport} is {vnis[key]}'s")
                )
            vnis.setdefault(key, f"port {port.name!r}")
    if spec.lab is not None:
        for h, host in enumerate(spec.lab.hosts):
            if host.name in names:
                problems.append((f"lab.hosts[{h}].name", f"a port is named {host.name!r} already ({names[host.name]})"))
        problems += _lab_problems(spec.lab)
    known = port_names(spec)
    feeds: dict[str, list[int]] = {}
    for c, chain in enumerate(spec.chains):
        where = f"chains[{c}]"
        source = source_of(chain.source)
        for end, name in (("from", source.port if source else None), ("to", chain.to)):
            if name is not None and name not in known:
                listed = ", ".join(sorted(known)) or "none: add ports or a lab"
                problems.append((f"{where}.{end}", f"no port or lab host is named {name!r} (there are: {listed})"))
        if source is None:
            continue
        feeds.setdefault(source.port, []).append(c)
        for s, prefix in enumerate(source.source or []):
            try:
                ipaddress.ip_network(prefix, strict=False)
            except ValueError:
                problems.append((f"{where}.from.source[{s}]", f"not an IPv4 or IPv6 prefix: {prefix!r}"))
        given = [field for field, value in chain.traffic if value is not None]
        if given:
            problems.append(
                (f"{where}.traffic.{given[0]}", "the chain takes its traffic from its port: leave traffic out")
            )
    for port, chains in feeds.items():
        if len(chains) > 1:
            for c in chains:
                if not source_of(spec.chains[c].source).source:
                    others = ", ".join(spec.chains[o].name for o in chains if o != c)
                    problems.append(
                        (
                            f"chains[{c}].from",
                            f"port {port!r} also feeds {others}: give each chain the source prefixes it takes "
                            "(from: {port: NAME, source: [198.18.1.0/24]})",
                        )
                    )
    if spec.lab is not None and not feeds:
        problems.append(IDLE_LAB)
    return problems
