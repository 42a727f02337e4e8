"""IPv6 as real hosts send it (plain, behind a hop-by-hop header, in an 802.1Q tag; HTTP requests benign and SQL
injections) replayed through checkip, a firewall allowing only IPv6 TCP from 2001:db8::/32, ttl, validate_url and
count_url: the benign requests pass, one hop limit lower,
the attacks are dropped by validate_url, and Wireshark's dissector (tshark), reading what went in and what came out,
agrees on every field; the accounting is exact. Then the generator's own IPv6 in a tag, and a capture that mixes
IPv4 (plain, with options, in QinQ), IPv6 and requests split across segments, each packet meeting its promised fate."""

from __future__ import annotations

import shutil

import pytest

from conftest import requires_root
from fuzz.write_seeds import ethernet, ipv4, ipv6, request, tcp
from integration.test_pcap import replay_through, run
from integration.test_tagged_frames import tagged, tshark_fields, write_pcap

pytestmark = [requires_root, pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is missing")]

REPLAY = replay_through(
    "name: check, type: checkip",
    "name: fw, type: firewall, args: {rules: [{src: '2001:db8::/32', proto: tcp, action: allow}], default: deny}",
    "name: ttl, type: ttl",
    "name: waf, type: validate_url",
    "name: urls, type: count_url",
)
BENIGN = ["/index.html", "/img/logo.png", "/search?q=cats"]
ATTACK = "/item?id=1%27%20OR%20%271%27%3D%271"
HOP_BY_HOP = bytes([6, 0, 5, 2, 0, 0, 1, 0])  # next header TCP; a Router Alert, as MLD sends


def frame(url: str, kind: int) -> bytes:
    if kind == 0:
        return ethernet(ipv6(6, tcp(request(url))), 0x86DD)
    if kind == 1:
        return ethernet(ipv6(0, HOP_BY_HOP + tcp(request(url))), 0x86DD)
    return tagged(ethernet(ipv6(6, tcp(request(url))), 0x86DD), 0x8100, 100)


def dissected(path) -> list[dict]:
    """The tag, the hop limit, the hop-by-hop header's next header and the HTTP URI of each frame."""
    return tshark_fields(path, ["vlan.id", "ipv6.hlim", "ipv6.hopopts.nxt", "http.request.uri"])


def test_ipv6_requests_pass_one_hop_lower_and_attacks_are_dropped_as_wireshark_reads_them(
    write_spec, tmp_path, machine_before
):
    sent, received = tmp_path / "sent.pcap", tmp_path / "received.pcap"
    frames = [frame(url, kind) for kind in range(3) for url in BENIGN + [ATTACK]]
    write_pcap(sent, frames)
    before = dissected(sent)
    assert [entry["http.request.uri"] for entry in before] == (BENIGN + [ATTACK]) * 3, before
    assert {entry["vlan.id"] for entry in before[8:]} == {"100"} and before[4]["ipv6.hopopts.nxt"] == "6", before

    results = run(write_spec(REPLAY.replace("PCAP", str(sent))), tmp_path, "--capture", str(received))
    chain = results["chains"][0]
    assert chain["generated"] == len(frames) and results["accounting"]["exact"]
    assert chain["delivered"] == 3 * len(BENIGN)
    assert chain["dropped"]["total"] == 3, chain["dropped"]
    reports = {nf["name"]: nf["report"] for nf in results["nfs"]}
    assert reports["urls"]["not_http"] == 0, reports["urls"]
    assert reports["fw"]["allowed"] == len(frames) and reports["fw"]["denied"] == 0, reports["fw"]

    after = dissected(received)
    kept = [entry for entry in before if entry["http.request.uri"] != ATTACK]
    assert len(after) == len(kept)
    for sent_frame, received_frame in zip(kept, after, strict=True):
        assert int(received_frame["ipv6.hlim"]) == int(sent_frame["ipv6.hlim"]) - 1
        for field in ("vlan.id", "ipv6.hopopts.nxt", "http.request.uri"):
            assert received_frame[field] == sent_frame[field], (field, sent_frame, received_frame)


GENERATED = """\
name: generated-ipv6
duration: 1
traffic: {rate: 20 kpps, flows: 10, ip_version: 6, vlan: 100, http: {malicious: 0.2}}
scheduler: coop
chains:
  - name: c
    nfs:
      - {name: check, type: checkip, core: 1}
      - name: fw
        type: firewall
        core: 1
        args: {rules: [{src: '2001:db8::/32', proto: tcp, action: allow}], default: deny}
      - {name: ttl, type: ttl, core: 1}
      - {name: waf, type: validate_url, core: 1}
"""


def test_the_generator_sends_ipv6_in_a_tag_that_the_nfs_and_wireshark_read_alike(write_spec, tmp_path, machine_before):
    captured = tmp_path / "delivered.pcap"
    results = run(write_spec(GENERATED), tmp_path, "--capture", str(captured), "--capture-limit", "200")
    chain = results["chains"][0]
    reports = {nf["name"]: nf["report"] for nf in results["nfs"]}
    assert results["accounting"]["exact"] and chain["generated"] > 1000, chain
    # Every frame is IPv6 TCP from 2001:db8::/32 (the firewall allowed all), valid (checkip dropped none); 2 flows
    # of 10 carry an SQL injection, which validate_url drops: everything else is delivered.
    assert (
        reports["fw"]["denied"] == 0 and reports["fw"]["allowed"] == chain["generated"] - chain["in_flight"]["total"]
    ), reports
    assert chain["dropped"]["nfs"].get("check", 0) == 0, chain["dropped"]
    assert reports["waf"]["requests_checked"] > 0 and sum(reports["waf"]["dropped_by_pattern"]) > 0, reports["waf"]
    seen = tshark_fields(
        captured,
        ["vlan.id", "ipv6.src", "ipv6.hlim", "tcp.checksum.status", "http.request.uri"],
        ("-o", "tcp.check_checksum:TRUE"),
    )
    assert len(seen) == 200
    assert {row["vlan.id"] for row in seen} == {"100"}
    assert all(row["ipv6.src"].startswith("2001:db8::") for row in seen), seen[:3]
    assert {row["ipv6.hlim"] for row in seen} == {"63"}  # 64 as sent, one hop lower through ttl
    assert {row["tcp.checksum.status"] for row in seen} == {"1"}  # Wireshark's "good" (0 bad, 2 unverified)
    assert all(row["http.request.uri"] and "%27" not in row["http.request.uri"] for row in seen), seen[:3]


MIXED = replay_through(
    "name: check, type: checkip",
    "name: fw, type: firewall, args: {rules: [{src: '2001:db8::/32', proto: tcp, action: allow}, "
    "{src: 10.0.0.0/8, proto: tcp, action: allow}], default: deny}",
    "name: ttl, type: ttl",
    "name: waf, type: validate_url, args: {engine: crs}",
    "name: urls, type: count_url",
)
SPLIT_ATTACK = "/item?id=1%20AND%205678%3D5678"  # boolean-based: only the CRS finds it


def split(url: str, port: int, version: int) -> list[bytes]:
    """A request line cut in two TCP segments of one flow, as a client whose first write was short sends it."""
    data = request(url)
    cut = data.index(b"=") + 1  # inside the URL: neither piece is a request line alone
    pieces = [tcp(data[:cut], port, 1), tcp(data[cut:], port, 1 + cut)]
    if version == 4:
        return [ethernet(ipv4(6, piece)) for piece in pieces]
    return [ethernet(ipv6(6, piece), 0x86DD) for piece in pieces]


def test_a_capture_mixing_ipv4_ipv6_tags_options_and_split_requests_meets_each_packets_promised_fate(
    write_spec, tmp_path, machine_before
):
    sent, received = tmp_path / "sent.pcap", tmp_path / "received.pcap"
    whole = {
        "ipv4": lambda url: ethernet(ipv4(6, tcp(request(url)))),
        "ipv4 with a router alert": lambda url: ethernet(ipv4(6, tcp(request(url)), options=b"\x94\x04\x00\x00")),
        "ipv4 in qinq": lambda url: ethernet(ipv4(6, tcp(request(url))), tags=((0x88A8, 200), (0x8100, 100))),
        "ipv6": lambda url: frame(url, 0),
        "ipv6 behind a hop-by-hop header": lambda url: frame(url, 1),
        "ipv6 in a tag": lambda url: frame(url, 2),
    }
    frames, fates = [], []  # what each frame must meet: delivered, or dropped by the waf
    for make in whole.values():
        for url in BENIGN + [ATTACK, SPLIT_ATTACK]:
            frames.append(make(url))
            fates.append("delivered" if url in BENIGN else "waf")
    benign_split, attack_split = split("/search?q=split", 3000, 4), split(SPLIT_ATTACK, 3001, 6)
    frames += benign_split + attack_split
    fates += ["delivered", "delivered", "delivered", "waf"]  # the attack's first piece carries nothing to judge
    write_pcap(sent, frames)

    results = run(write_spec(MIXED.replace("PCAP", str(sent))), tmp_path, "--capture", str(received))
    chain = results["chains"][0]
    reports = {nf["name"]: nf["report"] for nf in results["nfs"]}
    assert chain["generated"] == len(frames) and results["accounting"]["exact"], chain
    assert chain["delivered"] == fates.count("delivered"), (chain, reports)
    dropped_by = {nf: count for nf, count in chain["dropped"]["nfs"].items() if count}
    assert dropped_by == {"waf": fates.count("waf")}, chain["dropped"]
    assert reports["fw"]["denied"] == 0 and reports["waf"]["reassembled"] == 2, reports
    assert reports["waf"]["dropped_by_crs"] == fates.count("waf") and reports["waf"]["dropped_fragments"] == 0
    # Wireshark finds in what was delivered every benign request whole, and no attack.
    delivered_uris = [row["http.request.uri"] for row in tshark_fields(received, ["http.request.uri"])]
    assert sorted(uri for uri in delivered_uris if uri) == sorted(BENIGN * len(whole) + ["/search?q=split"])
