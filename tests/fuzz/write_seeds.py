"""Writes the fuzz targets' seed corpora, so the fuzzer starts from real inputs instead of finding IPv4, HTTP or a
deployment's fields by chance: for packet_nfs one frame of each kind the NFs should know, for deployment the
document the control plane hands the manager for each example spec, for wire_link streams of frames as a wire port
sends them.

Run from the repository root: .venv/bin/python tests/fuzz/write_seeds.py"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from controlplane.errors import SpecError
from controlplane.spec.deployment import run_config
from controlplane.spec.loading import load_spec

CORPORA = Path(__file__).parent / "corpus"
EXAMPLES = Path(__file__).parents[2] / "examples"
MACS = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01"


def checksum(data: bytes) -> int:
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4(protocol: int, l4: bytes, options: bytes = b"", source: bytes = bytes([10, 0, 0, 1])) -> bytes:
    header = bytearray(
        struct.pack("!BBHHHBBH4s4s", 0x45 + len(options) // 4, 0, 20 + len(options) + len(l4), 1, 0, 64, protocol, 0,
                    source, bytes([192, 168, 0, 1])) + options
    )  # fmt: skip
    struct.pack_into("!H", header, 10, checksum(bytes(header)))
    return bytes(header) + l4


def tcp(payload: bytes, port: int = 1024, seq: int = 1) -> bytes:
    """A TCP segment (PSH, ACK) from `port` to 80 starting at sequence number `seq`, checksum left 0."""
    return struct.pack("!HHIIBBHHH", port, 80, seq, 0, 0x50, 0x18, 65535, 0, 0) + payload


def udp(payload: bytes) -> bytes:
    return struct.pack("!HHHH", 1024, 8080, 8 + len(payload), 0) + payload


def ethernet(l3: bytes, ether_type: int = 0x0800, tags: tuple[tuple[int, int], ...] = ()) -> bytes:
    return MACS + b"".join(struct.pack("!HH", tpid, vlan) for tpid, vlan in tags) + struct.pack("!H", ether_type) + l3


def ipv6(next_header: int, after: bytes) -> bytes:
    """An IPv6 header (2001:db8::1 to 2001:db8::2) and what follows it: extension headers, then the transport."""
    hosts = [bytes.fromhex("20010db8" + "00" * 11 + f"{host:02x}") for host in (1, 2)]
    return struct.pack("!IHBB16s16s", 6 << 28, len(after), next_header, 64, *hosts) + after


def request(url: str) -> bytes:
    return f"GET {url} HTTP/1.1\r\nHost: example.test\r\n\r\n".encode()


SEEDS = {
    "udp": ethernet(ipv4(17, udp(bytes(18)))),
    "http-get": ethernet(ipv4(6, tcp(request("/index.html")))),
    "http-sql-injection": ethernet(ipv4(6, tcp(request("/item?id=1%27%20or%20%271%27=%271")))),
    "http-url-not-utf8": ethernet(ipv4(6, tcp(request("/").replace(b"/ ", b"/\xff\xfe ")))),
    "vlan-http": ethernet(ipv4(6, tcp(request("/a"))), tags=((0x8100, 100),)),
    "qinq-udp": ethernet(ipv4(17, udp(bytes(18))), tags=((0x88A8, 200), (0x8100, 100))),
    "ipv4-router-alert": ethernet(ipv4(6, tcp(request("/b")), options=b"\x94\x04\x00\x00")),
    "ipv6-udp": ethernet(
        struct.pack("!IHBB16s16s", 6 << 28, 26, 17, 64, bytes(16), bytes(16)) + udp(bytes(18)), 0x86DD
    ),
    "ipv6-http-get": ethernet(ipv6(6, tcp(request("/index.html"))), 0x86DD),
    # Behind a hop-by-hop header (a Router Alert) and a first fragment's header (offset 0, more to come).
    "ipv6-extensions-http": ethernet(
        ipv6(0, bytes([44, 0, 5, 2, 0, 0, 1, 0]) + bytes([6, 0, 0, 1, 0, 0, 0, 42]) + tcp(request("/c"))), 0x86DD
    ),
    "arp": ethernet(bytes(28), 0x0806),
}


def wire_stream(*frames: bytes) -> bytes:
    """A wire_link input: each frame after its two-byte length."""
    return b"".join(struct.pack("!H", len(frame)) + frame for frame in frames)


def trailed(frame: bytes, seq: int) -> bytes:
    """A frame as a wire port sends it: the link trailer (dataplane/ports/wire/link_trailer.h) after its bytes."""
    return frame + struct.pack("!QQBBH", seq, 1_700_000_000_000_000_000 + seq, 1, 0, 0x7D57)


WIRE_STREAMS = {
    "in-order": wire_stream(*(trailed(SEEDS["udp"], seq) for seq in range(4))),
    "gap-late-duplicate": wire_stream(*(trailed(SEEDS["udp"], seq) for seq in (0, 2, 1, 1, 5))),
    "foreign-among": wire_stream(trailed(SEEDS["http-get"], 0), SEEDS["arp"], trailed(SEEDS["ipv6-udp"], 1)),
}


def deployments() -> dict[str, bytes]:
    """The manager's input for each example that is a spec (an SFC request is composed first: not one)."""
    found = {}
    for path in sorted(EXAMPLES.glob("*.yaml")):
        try:
            found[path.stem] = json.dumps(run_config(load_spec(path)), sort_keys=True).encode()
        except SpecError:
            continue
    return found


if __name__ == "__main__":
    for target, seeds in (("packet_nfs", SEEDS), ("deployment", deployments()), ("wire_link", WIRE_STREAMS)):
        (CORPORA / target).mkdir(parents=True, exist_ok=True)
        for name, content in seeds.items():
            (CORPORA / target / name).write_bytes(content)
        print(f"{len(seeds)} seeds in {CORPORA / target}")
