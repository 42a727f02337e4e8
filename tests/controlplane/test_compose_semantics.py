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
from hypothesis import HealthCheck, given, settings
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


@st.composite
def packets(draw) -> str:
    """One Ethernet frame as hex: IPv4 TCP or UDP, an HTTP request, a piece of one cut in two segments (each piece of
    one flow, so that a list of frames often holds both, in either order), other bytes or none; sometimes broken."""
    proto = draw(st.sampled_from(["tcp", "udp"]))
    src = draw(st.sampled_from([0x0A000001, 0x0A0000FE, 0xC0A80001]))  # 10.0.0.1, 10.0.0.254, 192.168.0.1
    dst = draw(st.sampled_from([0xC0A80102, 0x08080808]))
    sport, dport = draw(st.sampled_from([1024, 40000])), draw(st.sampled_from([22, 53, 80, 85, 8080]))
    seq = 1
    kind = draw(st.sampled_from(["request", "piece", "bytes"])) if proto == "tcp" else "bytes"
    if kind == "bytes":
        payload = draw(st.binary(max_size=24))
    else:
        payload = f"GET {draw(st.sampled_from(URLS))} HTTP/1.1\r\nHost: example.com\r\n\r\n".encode()
    if kind == "piece":  # the HTTP μNFs put the line back together: merged or not, they must judge it alike
        cut = draw(st.integers(1, len(payload) - 1))
        if draw(st.booleans()):
            payload = payload[:cut]
        else:
            payload, seq = payload[cut:], 1 + cut
        src, dst, sport, dport = 0x0A000001, 0xC0A80102, 40000, 80
    if proto == "tcp":
        l4 = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x18, 65535, 0, 0) + payload
    else:
        l4 = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ttl = draw(st.sampled_from([64, 2, 1]))
    header = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + len(l4), 7, 0, ttl, 6 if proto == "tcp" else 17, 0, src, dst)
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    breakage = draw(st.sampled_from(["none"] * 6 + ["checksum", "version", "short"]))
    if breakage == "checksum":
        header = header[:10] + b"\x12\x34" + header[12:]
    elif breakage == "version":
        header = b"\x65" + header[1:]
    frame = bytes.fromhex("0200000000010200000000020800") + header + l4
    if breakage == "short":
        frame = frame[:30]
    return frame.hex()


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
@given(sfc=sfc_requests(), frames=st.lists(packets(), min_size=1, max_size=12))
def test_the_composed_graph_does_to_every_packet_what_the_chained_vnfs_do(sfc, frames):
    unmerged = expand(sfc, TEMPLATES)
    composition = compose(sfc, unmerged, DESCRIPTORS)
    out = evaluate({"unmerged": eval_graph(unmerged), "composed": eval_graph(composition.composed)}, frames)
    chained, composed = out["unmerged"], out["composed"]
    for frame, a, b in zip(frames, chained["packets"], composed["packets"], strict=False):
        assert a == b, (frame, a, b, [m.removed for m in composition.merges], composition.groups)
    for name, report in composed["reports"].items():
        assert chained["reports"][name] == report, (name, [m.removed for m in composition.merges])


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
@given(frames=st.lists(packets(), min_size=1, max_size=12))
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
