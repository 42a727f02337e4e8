"""Classic pcap files as replays: what can be replayed, and a clear reason for every file that cannot."""

from __future__ import annotations

import struct

from controlplane.spec.pcap_file import read_pcap, replay_problem


def pcap(packets: list[bytes], link_type: int = 1, cut: int = 0) -> bytes:
    data = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, link_type)
    for i, packet in enumerate(packets):
        data += struct.pack("<IIII", i, 0, len(packet) - cut, len(packet)) + packet[: len(packet) - cut]
    return data


def test_a_capture_reads_back_packet_for_packet(tmp_path):
    frames = [bytes(range(60)), bytes(100)]
    (tmp_path / "a.pcap").write_bytes(pcap(frames))
    assert read_pcap(tmp_path / "a.pcap").packets == frames
    assert replay_problem(tmp_path / "a.pcap") is None


def test_every_unreplayable_file_says_why(tmp_path):
    cases = {
        "missing.pcap": (None, "cannot read it"),
        "text.pcap": (b"hello, world, this is no capture", "no pcap magic"),
        "ng.pcap": (b"\x0a\x0d\x0d\x0a" + bytes(40), "pcapng"),
        "radio.pcap": (pcap([bytes(60)], link_type=127), "link type is 127"),
        "empty.pcap": (pcap([]), "no packets"),
        "cut.pcap": (pcap([bytes(200)], cut=100), "cut to 100 of its 200 bytes"),
        "jumbo.pcap": (pcap([bytes(9000)]), "packet 0 is 9000 bytes"),
        "short.pcap": (pcap([bytes(60)])[:-10], "ends inside packet 0"),
    }
    for name, (content, reason) in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        assert reason in (replay_problem(tmp_path / name) or ""), name
