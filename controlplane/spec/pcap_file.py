"""Classic pcap files (libpcap's format, Ethernet link type): read for checking a replay before any run, and for
comparing captures. The data plane reads and writes them with libpcap itself (dataplane/traffic/replay_frames.*,
dataplane/sink/pcap_capture.*)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

LINKTYPE_ETHERNET = 1
MAX_PCAP_PACKETS = 1 << 20  # the manager holds a replay in memory
MAX_FRAME_BYTES = 1514  # without the FCS: the largest frame the generator sends
_MAGICS = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}
_PCAPNG = b"\x0a\x0d\x0d\x0a"


class PcapProblem(Exception):
    """Why a file cannot be replayed, in words for the user."""


@dataclass
class Capture:
    link_type: int
    packets: list[bytes]


def read_pcap(path: str | Path) -> Capture:
    """Every packet of a classic pcap file; raises PcapProblem saying what is wrong with it."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise PcapProblem(f"cannot read it: {error.strerror or error}") from None
    if data[:4] == _PCAPNG:
        raise PcapProblem("it is pcapng; convert it to classic pcap first (editcap -F pcap IN OUT)")
    if len(data) < 24 or data[:4] not in _MAGICS:
        raise PcapProblem("not a pcap file (no pcap magic number at its start)")
    order = _MAGICS[data[:4]]
    link_type = struct.unpack(order + "I", data[20:24])[0]
    packets, offset = [], 24
    while offset < len(data):
        if offset + 16 > len(data):
            raise PcapProblem(f"it ends inside the header of packet {len(packets)}")
        included, original = struct.unpack(order + "II", data[offset + 8 : offset + 16])
        if offset + 16 + included > len(data):
            raise PcapProblem(f"it ends inside packet {len(packets)}")
        packets.append(data[offset + 16 : offset + 16 + included])
        if included != original:
            raise PcapProblem(f"packet {len(packets) - 1} was cut to {included} of its {original} bytes when captured")
        if len(packets) > MAX_PCAP_PACKETS:
            raise PcapProblem(f"it holds more than {MAX_PCAP_PACKETS} packets")
        offset += 16 + included
    return Capture(link_type, packets)


def replay_problem(path: str | Path) -> str | None:
    """Why the file cannot be a chain's traffic, or None."""
    try:
        capture = read_pcap(path)
    except PcapProblem as problem:
        return str(problem)
    if capture.link_type != LINKTYPE_ETHERNET:
        return f"its link type is {capture.link_type}, not Ethernet (1)"
    if not capture.packets:
        return "it holds no packets"
    for i, packet in enumerate(capture.packets):
        if not 14 <= len(packet) <= MAX_FRAME_BYTES:
            return (
                f"packet {i} is {len(packet)} bytes; frames of 14 to {MAX_FRAME_BYTES} bytes (no FCS) can be replayed"
            )
    return None
