"""The composer keeps an SFC's semantics (a property test, Hypothesis): random SFCs built from the shipped VNF
templates and random packets go through the μNF graph that chains the VNFs as they are and through the composed
graph, each in one process (build/tandem-graph-eval runs the real μNFs); every packet must come out with the same
bytes or be dropped by the same μNF, and every μNF the composed graph keeps must end with the same report (its
counters). None of the papers checks this."""

from __future__ import annotations

import json
import struct
import subprocess

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import REPO
from controlplane.sfc.compose import compose, eval_graph, parallel_runs, parallelise
from controlplane.sfc.sfc_request import MicroEdge, MicroGraph, MicroNode, SfcGraph, expand
from controlplane.sfc.spec_or_request import descriptors
from controlplane.sfc.templates import load_templates

GRAPH_EVAL = REPO / "build" / "tandem-graph-eval"
pytestmark = pytest.mark.skipif(not GRAPH_EVAL.exists(), reason="the data plane is not built (./scripts/setup.sh)")

TEMPLATES = load_templates() if GRAPH_EVAL.exists() else {}
DESCRIPTORS = descriptors() if GRAPH_EVAL.exists() else {}
RULES = [
    {"dst_port": 22, "proto": "tcp", "action": "deny"},
    {"src": "10.0.0.0/8", "action": "deny"},
    {"dst_port": "80-90", "proto": "tcp", "action": "allow"},
    {"proto": "udp", "action": "deny"},
]
URLS = [
    "/index.html",
    "/img/logo.png",
    "/search?q=cats",
    "/login?user=admin'--",
    "/item?id=1 OR 1=1",
    "/a%27%20or%201%3D1",
]


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def tcp_frame(payload: bytes, src: int, dst: int, sport: int, dport: int, seq: int = 1, ttl: int = 64) -> bytes:
    """An Ethernet frame of an IPv4 TCP segment with a valid header checksum."""
    l4 = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x18, 65535, 0, 0) + payload
    return ipv4_frame(l4, 6, src, dst, ttl)


def ipv4_frame(l4: bytes, protocol: int, src: int, dst: int, ttl: int) -> bytes:
    header = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + len(l4), 7, 0, ttl, protocol, 0, src, dst)
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    return bytes.fromhex("0200000000010200000000020800") + header + l4


@st.composite
def packets(draw) -> str:
    """One Ethernet frame as hex: IPv4 TCP or UDP, an HTTP request, other bytes or none; sometimes broken."""
    proto = draw(st.sampled_from(["tcp", "udp"]))
    if proto == "tcp" and draw(st.booleans()):
        payload = f"GET {draw(st.sampled_from(URLS))} HTTP/1.1\r\nHost: example.com\r\n\r\n".encode()
    else:
        payload = draw(st.binary(max_size=24))
    src = draw(st.sampled_from([0x0A000001, 0x0A0000FE, 0xC0A80001]))  # 10.0.0.1, 10.0.0.254, 192.168.0.1
    dst = draw(st.sampled_from([0xC0A80102, 0x08080808]))
    sport, dport = draw(st.sampled_from([1024, 40000])), draw(st.sampled_from([22, 53, 80, 85, 8080]))
    ttl = draw(st.sampled_from([64, 2, 1]))
    if proto == "tcp":
        frame = tcp_frame(payload, src, dst, sport, dport, ttl=ttl)
    else:
        frame = ipv4_frame(struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload, 17, src, dst, ttl)
    breakage = draw(st.sampled_from(["none"] * 6 + ["checksum", "version", "short"]))
    if breakage == "checksum":
        frame = frame[:24] + b"\x12\x34" + frame[26:]
    elif breakage == "version":
        frame = frame[:14] + b"\x65" + frame[15:]
    elif breakage == "short":
        frame = frame[:30]
    return frame.hex()


@st.composite
def frame_lists(draw, max_size: int) -> list[str]:
    """Frames as `packets` draws them, and often a request whose line is cut in two TCP segments of one flow among
    them: in order, or its second piece first (past a gap), or its first piece twice (a retransmission). The HTTP
    μNFs put such a line back together: merged or not, they must judge it alike."""
    frames = draw(st.lists(packets(), min_size=1, max_size=max_size))
    if draw(st.booleans()):
        request = f"GET {draw(st.sampled_from(URLS))} HTTP/1.1\r\nHost: example.com\r\n\r\n".encode()
        cut = draw(st.integers(1, request.index(b"\r\n") + 1))  # inside the request line, or between CR and LF
        src = draw(st.sampled_from([0x0A000001, 0xC0A80001]))
        first = tcp_frame(request[:cut], src, 0xC0A80102, 40000, 80).hex()
        second = tcp_frame(request[cut:], src, 0xC0A80102, 40000, 80, seq=1 + cut).hex()
        orders = {"in order": [first, second], "second first": [second, first], "first twice": [first, first, second]}
        order = draw(st.sampled_from(sorted(orders)))
        at = draw(st.integers(0, len(frames)))
        frames[at:at] = orders[order]
        event(f"a request line cut in two: {order}")
    return frames


@st.composite
def sfc_requests(draw) -> SfcGraph:
    """A line of one to four VNFs from the catalog, with arguments drawn from small sets."""
    vnfs = []
    for v in range(draw(st.integers(2, 4))):  # one VNF alone has nothing to merge
        template = draw(st.sampled_from(sorted(TEMPLATES)))
        args = {}
        if template == "edge_firewall":
            args = {
                "rules": draw(st.lists(st.sampled_from(RULES), max_size=2, unique_by=json.dumps)),
                "default": draw(st.sampled_from(["allow", "deny"])),
            }
        elif template == "monitoring":
            args = {"max_urls": draw(st.sampled_from([1, 4096]))}
        vnfs.append({"name": f"v{v}", "template": template, "args": args})
    links = [{"from": a["name"], "to": b["name"]} for a, b in zip(vnfs, vnfs[1:], strict=False)]
    return SfcGraph.model_validate(
        {"vnfs": vnfs, "links": links, "core": 1, "parallel": draw(st.sampled_from(["on", "off"]))}
    )


def evaluate(graphs: dict, frames: list[str]) -> dict:
    result = subprocess.run(
        [str(GRAPH_EVAL)],
        input=json.dumps({"graphs": graphs, "packets": frames}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sfc=sfc_requests(), frames=frame_lists(12))
def test_the_composed_graph_does_to_every_packet_what_the_chained_vnfs_do(sfc, frames):
    unmerged = expand(sfc, TEMPLATES)
    composition = compose(sfc, unmerged, DESCRIPTORS)
    out = evaluate({"unmerged": eval_graph(unmerged), "composed": eval_graph(composition.composed)}, frames)
    chained, composed = out["unmerged"], out["composed"]
    for frame, a, b in zip(frames, chained["packets"], composed["packets"], strict=False):
        assert a == b, (frame, a, b, [m.removed for m in composition.merges], composition.groups)
    for name, report in composed["reports"].items():
        assert chained["reports"][name] == report, (name, [m.removed for m in composition.merges])
    if any(report.get("reassembled") for report in chained["reports"].values()):
        event("a request line split across segments was judged whole")


def test_the_papers_sfc_loses_its_repeated_ip_checks_and_http_classification():
    # Edge Firewall -> Monitoring -> Application Firewall (μNF, Fig. 1(b)): the property above holds for it, and
    # the composer finds exactly the repeated work.
    sfc = SfcGraph.model_validate(
        {
            "core": 1,
            "vnfs": [
                {"name": "edge", "template": "edge_firewall"},
                {"name": "monitor", "template": "monitoring"},
                {"name": "appfw", "template": "application_firewall"},
            ],
            "links": [{"from": "edge", "to": "monitor"}, {"from": "monitor", "to": "appfw"}],
        }
    )
    composition = compose(sfc, expand(sfc, TEMPLATES), DESCRIPTORS)
    assert sorted(m.removed for m in composition.merges) == ["appfw.check", "appfw.classify", "monitor.check"]
    edges = {(e.source, e.target, e.label) for e in composition.composed.edges}
    assert ("monitor.urls", "appfw.validate", None) in edges  # an HTTP request goes on to the URL validator
    assert ("monitor.classify", "tx", "other") in edges  # anything else skips the application firewall


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=frame_lists(12))
def test_a_parallel_group_does_what_its_line_does(frames):
    # The shipped templates seldom leave two parallelisable μNFs in a row; this line has three.
    line = MicroGraph()
    for name, kind in (
        ("check", "checkip"),
        ("flows", "counter"),
        ("urls", "count_url"),
        ("swap", "macswap"),
        ("out", "pass"),
    ):
        line.nodes[name] = MicroNode(name, kind, {}, None)
    line.edges = [
        MicroEdge(a, b) for a, b in (("check", "flows"), ("flows", "urls"), ("urls", "swap"), ("swap", "out"))
    ]
    runs = parallel_runs(line, DESCRIPTORS)
    assert runs == [("check", ["flows", "urls", "swap"], "out")]
    grouped = parallelise(line, runs)
    out = evaluate({"line": eval_graph(line), "group": eval_graph(grouped)}, frames)
    assert out["line"]["packets"] == out["group"]["packets"]
    assert out["line"]["reports"] == out["group"]["reports"]
