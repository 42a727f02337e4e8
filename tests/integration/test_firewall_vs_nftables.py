"""Tandem's firewall against nftables, the kernel's: the same rules (given ones, the synthetic ones, the default) and
the same frames; the frames Tandem's firewall passes are exactly those a Linux bridge with the nftables ruleset
controlplane/machine/nft_firewall.py writes for it forwards. The lab benchmark's kernel side runs that ruleset, so
this holds both the firewall and the translation to the reference."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import textwrap

import pytest

from conftest import requires_root
from controlplane.machine.nft_firewall import ruleset
from controlplane.spec.pcap_file import read_pcap
from fuzz.write_seeds import checksum, ethernet
from integration.test_pcap import replay_through, run
from integration.test_tagged_frames import write_pcap

pytestmark = [requires_root, pytest.mark.skipif(shutil.which("nft") is None, reason="nftables is missing")]

ARGS = {
    "rules": [
        {"dst_port": 22, "proto": "tcp", "action": "deny"},
        {"src": "10.0.0.0/8", "action": "deny"},
        {"src": "198.18.7.0/24", "dst_port": "1000-1999", "proto": "udp", "action": "deny"},
        {"dst": "198.18.9.9", "action": "deny"},
    ],
    "synthetic_rules": 8,
}
NAMESPACE = "tandem-fw-reference"


def frame(source: str, destination: str, protocol: int, port: int) -> bytes:
    """A frame from port 40000 to `port`, TCP (6) or UDP (17), with valid IPv4 checksum."""
    l4 = (
        struct.pack("!HHIIBBHHH", 40000, port, 1, 0, 0x50, 0x02, 65535, 0, 0)
        if protocol == 6
        else struct.pack("!HHHH", 40000, port, 8, 0)
    )
    header = bytearray(
        struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0, 64, protocol, 0,
                    bytes(map(int, source.split("."))), bytes(map(int, destination.split("."))))
    )  # fmt: skip
    struct.pack_into("!H", header, 10, checksum(bytes(header)))
    return ethernet(bytes(header) + l4).ljust(60, b"\0")


def frames() -> list[bytes]:
    sources = ["198.18.1.1", "10.1.2.3", "198.18.7.5", "172.16.0.2", "172.16.0.3", "172.16.0.200"]
    destinations = ["198.18.0.2", "198.18.9.9"]
    ports = [22, 80, 3, 4, 1500]
    return [frame(s, d, p, port) for s in sources for d in destinations for p in (6, 17) for port in ports]


# Run in the namespace: sends every frame of a pcap into a0, and prints (hex) what reaches b0 through the bridge.
RELAY = textwrap.dedent(
    """
    import socket, struct, sys, time
    data = open(sys.argv[1], "rb").read()[24:]
    frames = []
    while data:
        length = struct.unpack("<I", data[8:12])[0]
        frames.append(data[16:16 + length]); data = data[16 + length:]
    receiver = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)); receiver.bind(("b0", 0))
    receiver.settimeout(0.5)
    sender = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); sender.bind(("a0", 0))
    for f in frames: sender.send(f)
    try:
        while True:
            got, (_, _, kind, *rest) = receiver.recvfrom(65536)
            if kind != socket.PACKET_OUTGOING: print(got.hex())
    except socket.timeout:
        pass
    """
)


def trimmed(frame: bytes) -> bytes:
    """The frame without the padding after its IP packet: a bridge under nftables trims it, Tandem keeps it."""
    return frame[: 14 + struct.unpack("!H", frame[16:18])[0]]


def through_nftables(tmp_path, sent) -> list[bytes]:
    rules = ruleset([{"name": "c", "from_port": 0, "nfs": [{"name": "fw", "type": "firewall", "args": ARGS}]}], ["a1"])
    commands = [
        ["ip", "netns", "add", NAMESPACE],
        *[["ip", "-n", NAMESPACE, "link", "add", f"{x}0", "type", "veth", "peer", "name", f"{x}1"] for x in "ab"],
        ["ip", "-n", NAMESPACE, "link", "add", "br0", "type", "bridge"],
        *[["ip", "-n", NAMESPACE, "link", "set", f"{x}1", "master", "br0"] for x in "ab"],
        *[["ip", "-n", NAMESPACE, "link", "set", name, "up"] for name in ("a0", "a1", "b0", "b1", "br0")],
    ]
    try:
        for command in commands:
            subprocess.run(command, check=True, capture_output=True)
        subprocess.run(["ip", "netns", "exec", NAMESPACE, "nft", "-f", "-"], input=rules, text=True, check=True)
        relay = subprocess.run(
            ["ip", "netns", "exec", NAMESPACE, sys.executable, "-c", RELAY, str(sent)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert relay.returncode == 0, relay.stderr
        return [bytes.fromhex(line) for line in relay.stdout.split()]
    finally:
        subprocess.run(["ip", "netns", "del", NAMESPACE], capture_output=True)


def test_tandem_and_nftables_pass_the_same_frames(write_spec, tmp_path, machine_before):
    sent, received = tmp_path / "sent.pcap", tmp_path / "received.pcap"
    offered = frames()
    write_pcap(sent, offered)
    args = str(ARGS).replace("'", '"')
    spec = replay_through(f"name: fw, type: firewall, args: {args}").replace("PCAP", str(sent))
    results = run(write_spec(spec), tmp_path, "--capture", str(received))
    assert results["accounting"]["exact"]
    by_tandem = {trimmed(f) for f in read_pcap(received).packets}
    by_kernel = {trimmed(f) for f in through_nftables(tmp_path, sent)} & {trimmed(f) for f in offered}
    assert 0 < len(by_tandem) < len(offered)  # some pass, some are denied: the comparison says something
    assert by_tandem == by_kernel, {
        "tandem only": [f.hex() for f in by_tandem - by_kernel][:3],
        "kernel only": [f.hex() for f in by_kernel - by_tandem][:3],
    }
