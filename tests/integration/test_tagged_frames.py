"""Frames as real hosts and switches send them (802.1Q and QinQ tags, IPv4 options) replayed through checkip, an
allow-all firewall, ttl and count_url: every frame passes, and Wireshark's dissector (tshark), reading what went in
and what came out, agrees that each kept its tags and options, lost one TTL and has a good header checksum."""

from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from conftest import requires_root
from controlplane.spec.pcap_file import read_pcap
from fuzz.write_seeds import checksum
from integration.test_pcap import SOURCE, replay_through, run

pytestmark = [requires_root, pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is missing")]

# test_pcap's replay with a firewall and ttl between checkip and count_url. 20 kpps is far below what four light NFs
# take on any host: nothing queues, so nothing is lost.
REPLAY = replay_through(
    "name: check, type: checkip",
    "name: fw, type: firewall, args: {rules: [{src: 0.0.0.0/0, action: allow}], default: deny}",
    "name: ttl, type: ttl",
    "name: urls, type: count_url",
)
FRAMES = 40
ROUTER_ALERT = b"\x94\x04\x00\x00"  # the IPv4 option IGMP and RSVP send


def tagged(frame: bytes, tpid: int, vlan: int) -> bytes:
    return frame[:12] + struct.pack("!HH", tpid, vlan) + frame[12:]


def with_router_alert(frame: bytes) -> bytes:
    header = bytearray(frame[14:34] + ROUTER_ALERT)
    header[0] = 0x46  # version 4, 24-byte header
    struct.pack_into("!H", header, 2, struct.unpack_from("!H", header, 2)[0] + len(ROUTER_ALERT))
    struct.pack_into("!H", header, 10, 0)
    struct.pack_into("!H", header, 10, checksum(bytes(header)))
    return frame[:14] + bytes(header) + frame[34:]


UNUSUAL = [
    lambda f: f,
    lambda f: tagged(f, 0x8100, 100),
    lambda f: tagged(tagged(f, 0x8100, 100), 0x88A8, 200),  # QinQ: 802.1ad outside, 802.1Q inside
    with_router_alert,
    lambda f: tagged(with_router_alert(f), 0x8100, 7),
]


def write_pcap(path, frames: list[bytes]) -> None:
    records = b"".join(struct.pack("<IIII", 0, i, len(f), len(f)) + f for i, f in enumerate(frames))
    path.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1) + records)


def tshark_fields(path, fields: list[str], options: tuple[str, ...] = ()) -> list[dict]:
    """What Wireshark's dissectors read in each frame of a capture, field by field. Sequence analysis is off: the
    captures repeat a flow's segments, which it would take for retransmissions and leave out of HTTP."""
    result = subprocess.run(
        ["tshark", "-r", str(path), *options, "-o", "tcp.analyze_sequence_numbers:FALSE"]
        + ["-T", "fields", "-E", "separator=/t"]
        + [arg for field in fields for arg in ("-e", field)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return [dict(zip(fields, line.split("\t"), strict=True)) for line in result.stdout.splitlines()]


def dissected(path) -> list[dict]:
    """Tags, the IPv4 header's length, TTL and checksum (checked) and the HTTP URI of each frame."""
    fields = ["ieee8021ad.id", "vlan.id", "ip.hdr_len", "ip.ttl", "ip.checksum.status", "http.request.uri"]
    return tshark_fields(path, fields, ("-o", "ip.check_checksum:TRUE"))


def test_tagged_frames_and_ip_options_pass_as_wireshark_reads_them(write_spec, tmp_path, machine_before):
    plain, sent, received = tmp_path / "plain.pcap", tmp_path / "sent.pcap", tmp_path / "received.pcap"
    run(write_spec(SOURCE), tmp_path, "--capture", str(plain), "--capture-limit", str(FRAMES))
    frames = [UNUSUAL[i % len(UNUSUAL)](frame) for i, frame in enumerate(read_pcap(plain).packets)]
    write_pcap(sent, frames)
    before = dissected(sent)
    # The frames the test made are what it meant them to be, as Wireshark reads them.
    assert [entry["ieee8021ad.id"] for entry in before[: len(UNUSUAL)]] == ["", "", "200", "", ""]
    assert [entry["vlan.id"] for entry in before[: len(UNUSUAL)]] == ["", "100", "100", "", "7"]
    assert [entry["ip.hdr_len"] for entry in before[: len(UNUSUAL)]] == ["20", "20", "20", "24", "24"]
    assert all(entry["ip.checksum.status"] == "1" and entry["http.request.uri"] for entry in before), before

    results = run(write_spec(REPLAY.replace("PCAP", str(sent))), tmp_path, "--capture", str(received))
    chain = results["chains"][0]
    assert chain["generated"] == FRAMES and chain["delivered"] == FRAMES and results["accounting"]["exact"]
    reports = {nf["name"]: nf["report"] for nf in results["nfs"]}
    assert reports["fw"]["denied"] == 0 and reports["fw"]["denied_unreadable"] == 0, reports["fw"]
    assert reports["urls"]["not_http"] == 0, reports["urls"]

    after = dissected(received)
    assert len(after) == FRAMES
    for sent_frame, received_frame in zip(before, after, strict=True):
        assert received_frame["ip.checksum.status"] == "1", received_frame  # ttl's incremental update, options too
        assert int(received_frame["ip.ttl"]) == int(sent_frame["ip.ttl"]) - 1
        for field in ("ieee8021ad.id", "vlan.id", "ip.hdr_len", "http.request.uri"):
            assert received_frame[field] == sent_frame[field], (field, sent_frame, received_frame)
