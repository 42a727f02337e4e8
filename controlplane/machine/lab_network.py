"""A lab's network: a network namespace per host, joined to the data plane by a veth whose root end (tdl<i>) the data
plane opens as a DPDK net_af_packet port and whose other end (eth0) carries the host's address. Every namespace and
interface is made through the run's MachineSession, so it is removed on every exit path."""

from __future__ import annotations

import shutil
import subprocess

from controlplane.errors import SetupError
from controlplane.machine.kernel_links import _root_veth, _without_ipv6, ip

# The root ends' names (in kernel_links.ROOT_INTERFACE_PREFIXES, so that a run that leaves one is caught).
ROOT_PREFIX = "tdl"
HOST_INTERFACE = "eth0"

# Offloads that would hand the data plane frames it cannot forward; off on both ends of every lab veth. The data plane
# reads the root end with a packet socket into 2 KiB frames and writes each frame, as it is, into another root end.
# Measured with packet sockets relaying frames of at most 2 KiB between two lab veths (kernel 6.18):
# - tx: with it on, a host's TCP hands its frames over with CHECKSUM_PARTIAL, and a packet socket reads them with the
#   checksum not filled in; re-injected, they reach the other host with a bad checksum (TcpInCsumErrors) and TCP never
#   connects (ping, which checksums in software, still works). Turning it off also turns off TSO and UDP segmentation,
#   which need it.
# - gro: on a root end it merges a host's TCP segments into frames of 3-7 KB, which do not fit the data plane's frames
#   (a TCP transfer fell to 240 kbit/s). Veths start with it off; it is said here so that no other setting matters.
# - tso, gso: with tx off TSO is off already, and GSO segments in software before the veth, so the data plane saw no
#   frame above the MTU either way; both are off so that no frame larger than the MTU is ever built for a lab veth.
# - tx-sctp-segmentation: tx off leaves it on, and SCTP hands the veth unsegmented frames when it is (read in the
#   kernel's sctp_packet_transmit; not measured: this kernel has no SCTP).
# rx checksumming stays on: frames written by a packet socket reach the host without a checksum state, so the host
# verifies every checksum in software whatever the flag says (the bad checksums above were counted with it on, and
# turning it off on both ends let none through either).
# The MTU stays the veths' 1500: a frame of 1514 bytes fits the data plane's 2 KiB.
OFFLOADS_OFF = ("tx", "tso", "gso", "gro", "tx-sctp-segmentation")


def build(session, run_id: str, lab: dict, offloads: bool = False) -> None:
    """Makes each host's namespace (`<run_id>-<name>`) and veth (root end tdl<i>, eth0 in the namespace with the
    host's address), and sets the host's `interface` (the data plane's port) and `netns` in the lab (as in the run
    config). `offloads`: leave the veths' offloads as the kernel sets them (for the kernel's own forwarding only:
    the data plane cannot carry what they make)."""
    if shutil.which("ethtool") is None:
        raise SetupError("a lab needs ethtool to turn off the offloads of its veths (Debian: apt install ethtool)")
    for i, host in enumerate(lab["hosts"]):
        netns = f"{run_id}-{host['name']}"
        interface = f"{ROOT_PREFIX}{i}"
        session.own_netns(netns)
        # IPv6 would send router solicitations and duplicate address probes across the chain: off in the namespace
        # (before its eth0 is made, which then starts without it), and on the root end (in _root_veth).
        _without_ipv6(netns)
        _root_veth(session, interface, HOST_INTERFACE, netns)
        # The root end carries frames between a host and the data plane and takes no part itself: no address, no
        # IPv6, and no ARP, or the root namespace would answer a host's ARP requests for its own addresses through
        # it. A packet socket sees the hosts' ARP frames before ARP does, so they still reach the data plane.
        ip("link", "set", interface, "arp", "off")
        if not offloads:
            _offloads_off(None, interface)
            _offloads_off(netns, HOST_INTERFACE)
        ip("-n", netns, "link", "set", "lo", "up")
        ip("-n", netns, "address", "add", host["address"], "dev", HOST_INTERFACE)
        host["interface"] = interface
        host["netns"] = netns


def _offloads_off(netns: str | None, interface: str) -> None:
    features = [word for feature in OFFLOADS_OFF for word in (feature, "off")]
    command = [*(["ip", "netns", "exec", netns] if netns else []), "ethtool", "-K", interface, *features]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SetupError(
            f"cannot turn off the offloads of the lab's veth {interface}: `{' '.join(command)}` said: "
            f"{(result.stderr or result.stdout).strip()}"
        )
