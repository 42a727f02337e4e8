"""The control API under requests drawn at random from its schema and beyond it (Hypothesis): every request gets a
JSON reply, a malformed one a 4xx naming what is wrong; `stop` is carried out only when asked for as the schema says,
and only a well-formed change reaches the data plane; the server keeps answering after every request. A server on a
socket of its own, fed by a status that needs no run; the data plane's side of live changes (the manager, tested end to
end in tests/integration/test_service.py) is a function here that answers as the manager does: NF `n` takes any
arguments, other names are refused by name, and scheduler switches are refused. A chain to add is checked by the
service's own code against a spec of one chain."""

from __future__ import annotations

import argparse
import json
import re
import socket
import stat
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO
from controlplane.cli.service import cmd_ctl
from controlplane.launch.control_api import ROUTES, ChainAddition, ChangeReply, Status
from controlplane.launch.control_client import Control
from controlplane.launch.control_server import MAX_BODY, ControlServer
from controlplane.launch.live_changes import LiveChanges
from controlplane.launch.service_status import ServiceStatus, bound_of_percentile
from controlplane.spec.deployment import added_chain_config
from controlplane.spec.live_additions import LiveAdditions
from controlplane.spec.loading import load_spec, parse_yaml
from controlplane.spec.models import Spec

CONFIG = {"name": "fuzzed", "scheduler": {"name": "coop"}, "chains": []}
SPEC = Spec.model_validate(
    {"name": "fuzzed", "chains": [{"name": "c", "nfs": [{"name": "n", "type": "macswap", "core": 1}]}]}
)
METRICS = {
    "unix_time": 1.0,
    "chains": [
        {"name": "c", "generated": 10, "delivered": 9, "entry_backpressure": 0, "latency": {"count": 0}},
    ],
    "rings": [{"name": "c:entry", "dropped_full": 1}],
    "nfs": [{"name": "n", "chain": "c", "packets_in": 9, "packets_dropped": 0}],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = tmp_path_factory.mktemp("control") / "tandem.sock"
    status = ServiceStatus(CONFIG)
    status.follow({"event": "started", "workers": [{"name": "w0", "pid": 42, "core": 1, "nfs": "n"}]})
    status.follow({"event": "progress", "t": 1.0, "phase": "measure", "metrics": METRICS})
    stops, commands, live = [], [], LiveChanges()

    def data_plane(line: bytes) -> None:  # answers from another thread, as the manager's events arrive
        command = json.loads(line)
        commands.append(command)
        answer = {"event": "change", "id": command["id"], "op": command["op"], "state": "applied"}
        if command["op"] != "set_args" or command["nf"] != "n":
            answer |= {"state": "refused", "errors": [{"path": "nf", "message": "no such NF"}]}
        threading.Thread(target=live.follow, args=(answer,)).start()

    live.connect(data_plane)
    control = ControlServer(path, status, lambda: stops.append(1), live, additions=LiveAdditions(SPEC, CONFIG))
    yield path, stops, commands
    control.close()


def exchange(path, raw: bytes) -> tuple[int, dict]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(str(path))
        client.sendall(raw)
        client.shutdown(socket.SHUT_WR)
        reply = b""
        try:
            while chunk := client.recv(65536):
                reply += chunk
        except ConnectionResetError:  # refused before its headers were read: the body it did not read resets us
            if not reply:  # after the reply, which is what counts
                raise
    if reply.startswith(b"{"):  # a request line of two words is HTTP/0.9's, whose replies have no status line
        return 400, json.loads(reply)
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_the_socket_is_its_owners_alone_and_status_reads_back(server):
    path, _, _ = server
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    status = Control(path).status()
    assert isinstance(status, Status) and status.chains[0].delivered == 9 and status.nfs[0].pid == 42
    assert status.drops_by_ring == {"c:entry": 1}


routes = [
    *ROUTES,
    "/nfs/n/args",
    "/nfs/other/args",
    "/nfs/a%20b/args",
    "/nfs//args",
    "/scheduler/",
    "/nfs/n/instances",
    "/chains/c",
    "/chains",
    "/ports",
]
paths = st.one_of(st.sampled_from([*routes, "/", "/status/", "/stop?now=1", "//stop"]), st.text(max_size=40))
methods = st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "BREW", "get"])
change_bodies = [b'{"args": {}}', b'{"args": {"rules": []}}', b'{"args": 3}', b'{"args": {}, "more": 1}', b"[]"]
scheduler_bodies = [
    b'{"name": "coop"}',
    b'{"name": ""}',
    b'{"name": "coop", "options": []}',
    b'{"options": {}}',
    b'{"name": "coop", "core": 1}',
    b'{"name": "coop", "core": -1}',
    b'{"name": "coop", "core": "1"}',
]
instances_bodies = [
    b'{"instances": 2}',
    b'{"instances": "auto"}',
    b'{"instances": 0}',
    b'{"instances": 9}',
    b'{"instances": 2.5}',
]
one_nf = [{"name": "m", "type": "macswap", "core": 1}]
chain_bodies = [
    json.dumps({"chain": {"name": "d", "nfs": one_nf}}).encode(),
    json.dumps({"chain": {"name": "c", "nfs": one_nf}}).encode(),
    json.dumps({"chain": {"name": "d", "from": "p0", "nfs": one_nf}}).encode(),
    json.dumps({"chain": {"name": "d", "nfs": one_nf}, "more": 1}).encode(),
    b'{"chain": {"name": "d", "nfs": []}}',
    b'{"chain": {"name": "d"}}',
    b'{"chain": 3}',
]
port_bodies = [
    b'{"port": {"name": "q", "device": "net_null_q"}}',
    b'{"port": {"name": "q", "device": "net_pcap_q,rx_pcap=/etc/shadow"}}',
    b'{"port": {"name": "q", "device": "net_af_packet_q,iface=tdm-nowhere"}}',
    b'{"port": {"name": "q", "device": "0000:00:01.0"}}',
    b'{"port": {"name": "q"}}',
    b'{"port": 3}',
]
bodies = st.one_of(
    st.sampled_from(
        [b"", b"{}", *change_bodies, *scheduler_bodies, *instances_bodies, *chain_bodies, *port_bodies]
        + [b"x" * (MAX_BODY + 1)]
    ),
    st.binary(max_size=200),
    st.dictionaries(
        st.text(max_size=8),
        st.recursive(st.none() | st.integers() | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3)),
        max_size=3,
    ).map(lambda value: json.dumps({"args": value}).encode()),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=methods, path=paths, body=bodies)
def test_every_request_gets_a_json_reply_and_only_a_proper_stop_stops(server, method, path, body):
    socket_path, stops, commands = server
    before, commands_before = len(stops), len(commands)
    target = "/" + path.lstrip("/") if path.isprintable() and " " not in path else path
    raw = f"{method} {target} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode(errors="replace")
    code, reply = exchange(socket_path, raw + body)
    proper_stop = method == "POST" and target == "/stop" and body.strip() in (b"", b"{}")  # JSON allows whitespace
    assert (len(stops) == before + 1) == proper_stop
    # Only a well-formed change reaches the data plane, whole: the NF of the URL, arguments that are a mapping.
    for command in commands[commands_before:]:
        nf = command.get("nf")
        chain = command.get("chain")
        if command["op"] == "add_chain":  # checked before it was sent: a chain the spec could have had
            assert (method, target) == ("POST", "/chains") and chain["name"] not in ("c", "n")
            assert chain["nfs"] and "from_port" not in chain
            continue
        if command["op"] == "add_port":  # checked before it was sent: no file named, an interface that is there
            assert (method, target) == ("POST", "/ports") and command["port"]["device"] == "net_null_q"
            continue
        assert (method, target) in {("PUT", "/scheduler"), ("PUT", f"/nfs/{nf}/args"), ("PUT", f"/nfs/{nf}/instances"),
                                    ("DELETE", f"/chains/{chain}")}  # fmt: skip
        assert isinstance(command.get("args", {}), dict) and isinstance(command.get("scheduler", {}), dict)
        assert command.get("instances", 1) == "auto" or 1 <= command.get("instances", 1) <= 8
    if code >= 400:
        assert 400 <= code < 500 and reply["error"]
        assert reply["field"] in ("path", "query", "method", "body", "request") or reply["field"].startswith("body.")
    else:
        assert (method, target) in {
            ("GET", "/status"),
            ("GET", "/openapi.json"),
            ("POST", "/stop"),
            ("PUT", "/nfs/n/args"),
        }
        assert target != "/nfs/n/args" or reply["state"] == "applied"
    assert Control(socket_path).status().name == "fuzzed"  # still answering


def test_requests_that_are_not_http_are_answered_too(server):
    path, stops, _ = server
    before = len(stops)
    for raw in (b"\x00\xff garbage\r\n\r\n", b"GET\r\n\r\n", b"GET /status HTTP/9.9\r\n\r\n", b"G" * 70000 + b"\r\n"):
        try:
            code, reply = exchange(path, raw)
        except (json.JSONDecodeError, IndexError, ValueError, ConnectionResetError, BrokenPipeError):
            continue  # the connection was closed without a reply: nothing was done either
        assert 400 <= code < 600 and "error" in reply
    assert len(stops) == before and Control(path).status().name == "fuzzed"


def test_the_example_chain_to_add_is_one_its_service_takes():
    spec = load_spec(REPO / "examples" / "three-firewalls.yaml")
    example = REPO / "examples" / "live" / "added-chain.yaml"
    chain = ChainAddition.model_validate({"chain": parse_yaml(example.read_text(), str(example))})
    config = added_chain_config(spec, chain.chain, {"chains": []})
    assert [nf["name"] for nf in config["nfs"]] == ["check", "count"] and config["traffic"]["rate_pps"] == 50e3


def test_status_shows_a_moved_nf_on_its_new_core_in_its_new_process():
    # A move is answered with the workers of the new layout (run_nf_move.cc): status takes them, as after a switch.
    status = ServiceStatus(CONFIG)
    status.follow({"event": "started", "workers": [{"name": "w0", "pid": 42, "core": 1, "nfs": "n"}]})
    status.follow({"event": "progress", "t": 1.0, "phase": "measure", "metrics": METRICS})
    refused = {"event": "change", "id": 1, "op": "move_nf", "state": "refused", "nf": "n", "core": 3}
    status.follow(refused | {"errors": [{"path": "core", "message": "no NF core"}]})
    assert [(nf["core"], nf["pid"]) for nf in status.status()["nfs"]] == [(1, 42)]
    moved = {"event": "change", "id": 2, "op": "move_nf", "state": "applied", "relayout": True, "nf": "n", "core": 2}
    status.follow(moved | {"core_before": 1, "workers": [{"name": "w0", "pid": 43, "core": 2, "nfs": "n"}]})
    shown = status.status()
    assert [(nf["core"], nf["pid"]) for nf in shown["nfs"]] == [(2, 43)] and shown["scheduler"] == "coop"
    assert [change["state"] for change in shown["changes"]] == ["refused", "applied"]


def test_one_cores_switch_is_a_reply_pending_or_applied_and_status_shows_each_cores_module():
    # Pending, the reply repeats the request, whose scheduler is a mapping (name, options, core).
    pending = {"id": 3, "state": "pending", "op": "set_scheduler", "scheduler": {"name": "coop", "options": {}}}
    assert ChangeReply.model_validate(pending | {"core": 2}).state == "pending"
    status = ServiceStatus(CONFIG)
    cores = [{"core": 1, "name": "rtc", "options": {}}, {"core": 2, "name": "coop", "options": {"k": 8}}]
    applied = {"event": "change", "id": 3, "op": "set_scheduler", "state": "applied", "scheduler": "per_core"}
    status.follow(applied | {"options": {"cores": cores}, "core": 2})
    shown = status.status()
    assert (shown["scheduler"], shown["scheduler_by_core"]) == ("per_core", {1: "rtc", 2: "coop"})
    status.follow(applied | {"id": 4, "scheduler": "coop", "options": {"k": 8}, "core": 1})
    assert "scheduler_by_core" not in status.status() and status.status()["scheduler"] == "coop"


def test_status_text_marks_a_removed_chain_and_names_what_each_change_was_about(tmp_path, capsys):
    status = ServiceStatus(CONFIG)
    workers = [{"name": "w0", "pid": 42, "core": 1, "nfs": "n"}, {"name": "w1", "pid": 43, "core": 1, "nfs": "m"}]
    status.follow({"event": "started", "workers": workers})
    metrics = dict(METRICS)
    metrics["chains"] = [*METRICS["chains"], dict(METRICS["chains"][0], name="d", generator_fell_behind=77)]
    metrics["nfs"] = [*METRICS["nfs"], {"name": "m", "chain": "d", "packets_in": 9, "packets_dropped": 0}]
    status.follow({"event": "progress", "t": 3.0, "phase": "measure", "metrics": metrics})
    # As the manager answers: a removal names its chain; a refusal names the NF asked about and when it was answered.
    removed = {"op": "remove_chain", "state": "applied", "chain": "d", "t_requested": 1.0, "t_done": 1.1}
    status.follow({"event": "change", "id": 1} | removed)
    status.follow({"event": "change_cost", "id": 1, "deficit_ms": 2.0, "generator_fell_behind_in_window": 500})
    refused = {"op": "move_nf", "state": "refused", "nf": "x", "t_done": 2.5}
    status.follow({"event": "change", "id": 2} | refused | {"errors": [{"path": "nf", "message": "no NF named 'x'"}]})
    server = ControlServer(tmp_path / "tandem.sock", status, lambda: None, LiveChanges())
    try:
        ask = {"socket": tmp_path / "tandem.sock", "connect": None, "token_file": None, "json": False}
        assert cmd_ctl(argparse.Namespace(operation="status", **ask)) == 0
    finally:
        server.close()
    shown = capsys.readouterr().out
    assert "d (removed)" in shown and re.search(r"\bm +d +removed ", shown), shown
    # The generator fell behind on d: a column, shown only then, says by how many packets.
    assert "generator fell behind" in shown and re.search(r"d \(removed\) .* 77\s*$", shown, re.M), shown
    assert "500 packets the generator gave up, too far behind" in shown, shown
    assert "t=1.00 s remove_chain d: applied" in shown and "t=2.50 s move_nf x: refused: no NF named 'x'" in shown
    assert "lost so far: full rings dropped 1 (c:entry 1)" in shown, shown  # the entry ring's drop, by name


def test_a_chain_that_delivered_nothing_since_the_last_report_has_no_latency_of_it():
    before = {"count": 4, "counts": [1, 4, 4], "bounds_us": [10, 100, 1000]}
    later = {"count": 8, "counts": [1, 4, 8], "bounds_us": [10, 100, 1000]}
    assert bound_of_percentile(later, before, 0.5) == 1000  # the last interval's four packets, all above 100 us
    assert bound_of_percentile(before, None, 0.5) == 100  # no report before: since the start
    assert bound_of_percentile(later, later, 0.5) is None  # none since (was the whole run's, shown as the last)
