"""A lab's hosts on the real machine: namespaces and veths made and removed through a MachineSession, real ping, iperf3
and curl run in them, across a bridge or a packet-socket relay (each standing in for the data plane); time limits,
the spec checks, and a control plane killed with SIGKILL whose servers die with it and whose journal the next run
replays."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import REPO, requires_root
from controlplane.errors import SetupError, SpecError
from controlplane.machine import changes, lab_network
from controlplane.machine.lab_commands import LabCommands, check
from controlplane.machine.leftovers import leftovers

pytestmark = pytest.mark.timeout(90)

RUN_ID = f"tandemlab{os.getpid()}"


def entry(command: str, time_limit: float = 20.0, expect: str = "success") -> dict:
    return {"command": command, "time_limit": time_limit, "expect": expect}


def lab(**hosts: tuple[list[dict], list[dict]]) -> dict:
    """A lab as the run config has it: hosts by name with (serve, run) commands, addresses 198.18.0.1, .2, ..."""
    built = {"hosts": []}
    for i, (name, (serve, run)) in enumerate(hosts.items()):
        for role, commands in (("serve", serve), ("run", run)):
            for k, command in enumerate(commands):
                command["spec_path"] = f"lab.hosts[{i}].{role}[{k}]"
        built["hosts"].append({"name": name, "address": f"198.18.0.{i + 1}/24", "serve": serve, "run": run})
    return built


def ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=True)


@contextlib.contextmanager
def bridge(*interfaces: str):
    """A Linux bridge of the test's own between the lab's root ends, standing in for the data plane."""
    name = f"labbr{os.getpid() % 100000}"
    ip("link", "add", name, "type", "bridge", "nf_call_iptables", "0", "nf_call_arptables", "0")
    try:
        for interface in interfaces:
            ip("link", "set", interface, "master", name)
        ip("link", "set", name, "up")
        yield
    finally:
        subprocess.run(["ip", "link", "del", name], capture_output=True)


class PacketRelay:
    """What the data plane does with a lab's frames, in a thread: read each root end with a packet socket into 2 KiB
    frames and write them, as read, into the other. Counts the frames that did not fit."""

    FRAME = 2048

    def __init__(self, left: str, right: str):
        self.oversize = 0
        self._sockets = {}
        for name in (left, right):
            relay = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # ETH_P_ALL
            relay.bind((name, 0))
            self._sockets[name] = relay
        self._other = {self._sockets[left]: self._sockets[right], self._sockets[right]: self._sockets[left]}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._relay, daemon=True)

    def __enter__(self) -> PacketRelay:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        for relay in self._sockets.values():
            relay.close()

    def _relay(self) -> None:
        frame = bytearray(self.FRAME)
        while not self._stop.is_set():
            ready, _, _ = select.select(list(self._other), [], [], 0.1)
            for relay in ready:
                size, address = relay.recvfrom_into(frame, self.FRAME, socket.MSG_TRUNC)
                if address[2] == socket.PACKET_OUTGOING:  # what this relay wrote into that end
                    continue
                if size > self.FRAME:
                    self.oversize += 1
                    continue
                with contextlib.suppress(OSError):  # a full queue: dropped, as a port would
                    self._other[relay].send(frame[:size])


def serve_and_run(commands: LabCommands, failed: list[BaseException]) -> None:
    try:
        commands.start_servers()
        commands.run_clients()
    except BaseException as error:
        failed.append(error)


def alive(pid: str) -> bool:
    """Whether a process still runs (a zombie does not: whoever adopted it may be slow to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def processes_in(netns: str) -> list[str]:
    return subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout.split()


@requires_root
def test_ping_and_iperf3_between_two_hosts_through_a_bridge_leave_nothing_behind():
    before = set(leftovers())
    the_lab = lab(
        client=([], [entry("ping -c 5 -i 0.2 {server}"), entry("iperf3 -c {server} -t 2 --json")]),
        server=([entry("iperf3 -s")], []),
    )
    with changes.MachineSession() as session:
        lab_network.build(session, RUN_ID, the_lab)
        client, server = the_lab["hosts"]
        assert (client["interface"], client["netns"]) == ("tdl0", f"{RUN_ID}-client")
        assert (server["interface"], server["netns"]) == ("tdl1", f"{RUN_ID}-server")
        commands = LabCommands(session, the_lab)
        with bridge("tdl0", "tdl1"):
            try:
                # As a run drives them: from a thread of their own that ends with the clients, before the stop.
                failed = []
                driver = threading.Thread(target=serve_and_run, args=(commands, failed))
                driver.start()
                driver.join()
                assert failed == [] and processes_in(server["netns"]) != []  # the server outlived that thread
            finally:
                records = commands.stop()
        assert commands.stop() is records  # a second call: the same records, nothing more done
        assert [processes_in(host["netns"]) for host in the_lab["hosts"]] == [[], []]
    assert set(leftovers()) - before == set()

    ping, iperf_client = (r for r in records if r["role"] == "run")
    (iperf_server,) = (r for r in records if r["role"] == "serve")
    assert ping["command"] == "ping -c 5 -i 0.2 198.18.0.2"
    assert ping["figures"]["loss_percent"] == 0 and ping["figures"]["received"] == 5, ping
    assert iperf_client["figures"]["goodput_bps"] > 0, iperf_client
    for record in (ping, iperf_client):
        assert record["exit_status"] == 0 and record["met"] and not record["timed_out"] and not record["interrupted"]
        assert record["host"] == "client" and record["expected"] == "success"
    assert ping["spec_path"] == "lab.hosts[0].run[0]" and iperf_client["spec_path"] == "lab.hosts[0].run[1]"
    assert "packet loss" in ping["output_tail"] and len(ping["output_tail"].splitlines()) <= 20
    # The server was stopped by the run, which is what a server is for: met, with no exit status of its own.
    assert iperf_server["host"] == "server" and iperf_server["spec_path"] == "lab.hosts[1].serve[0]"
    assert iperf_server["exit_status"] is None and iperf_server["met"] and iperf_server["seconds"] >= 2
    assert set(ping) == {
        "host",
        "role",
        "command",
        "spec_path",
        "exit_status",
        "seconds",
        "timed_out",
        "interrupted",
        "expected",
        "met",
        "output_tail",
        "figures",
    }


@requires_root
def test_tcp_crosses_a_packet_socket_relay_with_no_frame_above_2_kib():
    # The offloads at work: through packet sockets, TCP connects only with checksums filled in (tx off) and carries
    # only frames of the MTU (tso, gso, gro off).
    the_lab = lab(client=([], [entry("iperf3 -c {server} -t 1 --json")]), server=([entry("iperf3 -s")], []))
    with changes.MachineSession() as session:
        lab_network.build(session, RUN_ID, the_lab)
        for netns, interface in ((None, "tdl0"), (f"{RUN_ID}-client", "eth0")):
            features = subprocess.run(
                [*(["ip", "netns", "exec", netns] if netns else []), "ethtool", "-k", interface],
                capture_output=True,
                text=True,
            ).stdout
            for feature in ("tx-checksumming", "tcp-segmentation-offload", "generic-segmentation-offload"):
                assert f"{feature}: off" in features, (interface, feature)
            assert "generic-receive-offload: off" in features and "tx-udp-segmentation: off" in features
        root_end = json.loads(ip("-j", "address", "show", "tdl0").stdout)[0]
        assert root_end["addr_info"] == [] and "NOARP" in root_end["flags"] and root_end["mtu"] == 1500
        commands = LabCommands(session, the_lab)
        with PacketRelay("tdl0", "tdl1") as relay:
            try:
                commands.start_servers()
                commands.run_clients()
            finally:
                records = commands.stop()
    client = next(r for r in records if r["role"] == "run")
    assert client["exit_status"] == 0 and client["figures"]["goodput_bps"] > 0, client
    assert relay.oversize == 0


@requires_root
def test_a_client_past_its_time_limit_is_ended_and_recorded_as_timed_out():
    the_lab = lab(
        slow=([], [entry("sleep 30", time_limit=1.0), entry("true")]),
        quick=([], [entry("false", expect="failure"), entry("false")]),
    )
    with changes.MachineSession() as session:
        lab_network.build(session, RUN_ID, the_lab)
        commands = LabCommands(session, the_lab)
        started = time.monotonic()
        commands.run_clients()
        assert time.monotonic() - started < 10
        sleeper, after_it, expected_failure, unexpected_failure = commands.stop()
    assert sleeper["timed_out"] and sleeper["exit_status"] is None and not sleeper["met"]
    assert 1 <= sleeper["seconds"] < 10
    assert after_it["exit_status"] == 0 and after_it["met"]  # the host's next command still runs
    assert expected_failure["exit_status"] == 1 and expected_failure["met"]
    assert unexpected_failure["exit_status"] == 1 and not unexpected_failure["met"]


@requires_root
def test_commands_run_in_the_labs_directory(tmp_path):
    (tmp_path / "page.html").write_text("hello")
    the_lab = lab(host=([], [entry("test -f page.html")])) | {"directory": str(tmp_path)}
    with changes.MachineSession() as session:
        lab_network.build(session, RUN_ID, the_lab)
        commands = LabCommands(session, the_lab)
        commands.run_clients()
        (record,) = commands.stop()
    assert record["exit_status"] == 0, record


@requires_root
def test_a_stop_request_interrupts_the_clients_and_skips_the_rest():
    the_lab = lab(host=([], [entry("sleep 30"), entry("true")]))
    with changes.MachineSession() as session:
        lab_network.build(session, RUN_ID, the_lab)
        commands = LabCommands(session, the_lab)
        asked = time.monotonic() + 0.5
        commands.run_clients(lambda: time.monotonic() > asked)
        assert time.monotonic() - asked < 5
        sleeper, skipped = commands.stop()
    assert sleeper["interrupted"] and not sleeper["timed_out"] and not sleeper["met"]
    assert skipped["interrupted"] and skipped["exit_status"] is None and skipped["seconds"] == 0


@requires_root
def test_a_server_that_exits_before_it_listens_is_a_setup_error_that_names_it():
    the_lab = lab(server=([entry("sleep 30"), entry("sh -c 'echo cannot bind >&2; exit 3'")], []))
    with changes.MachineSession() as session:
        lab_network.build(session, RUN_ID, the_lab)
        commands = LabCommands(session, the_lab)
        with pytest.raises(SetupError, match=r"lab.hosts\[0\].serve\[1\] .* status 3 .*\n  cannot bind"):
            commands.start_servers()
        assert processes_in(f"{RUN_ID}-server") == []  # the server that did start was stopped
        records = commands.stop()
    assert [r["met"] for r in records] == [True, False]


def test_check_refuses_a_missing_program_and_an_unknown_host_naming_each_command():
    the_lab = lab(
        client=([], [entry("ping -c 1 {server}"), entry("no-such-tool-xyz {server}"), entry("ping {nowhere}")]),
        server=([], []),
    )
    with pytest.raises(SpecError) as refused:
        check(the_lab, "lab.yaml")
    assert refused.value.problems == [
        (
            "lab.hosts[0].run[1]",
            "no-such-tool-xyz is not installed on this machine (Debian: apt install no-such-tool-xyz)",
        ),
        (
            "lab.hosts[0].run[2]",
            "{nowhere} names no host of the lab (hosts: client, server; write {{ and }} for a brace)",
        ),
    ]
    assert str(refused.value).startswith("lab.yaml: lab.hosts[0].run[1]: no-such-tool-xyz is not installed")
    check(lab(client=([], [entry("ping -c 1 {server} # {{literal}}")]), server=([], [])))  # {{ }}: braces
    check(lab(server=([entry("cd / && exec python3 -m http.server")], [])))  # a shell builtin first: nothing to find


# The control plane of a run, killed with SIGKILL below once its server runs.
KILLED_RUN = f"""
import json, subprocess, time
from controlplane.machine import changes, lab_network
from controlplane.machine.lab_commands import LabCommands
lab = {{"hosts": [{{"name": "server", "address": "198.18.0.2/24", "run": [],
                   "serve": [{{"command": "iperf3 -s", "time_limit": 60, "expect": "success", "spec_path": "s"}}]}}]}}
with changes.MachineSession() as session:
    lab_network.build(session, "{RUN_ID}", lab)
    commands = LabCommands(session, lab)
    commands.start_servers()
    pids = subprocess.run(["ip", "netns", "pids", "{RUN_ID}-server"], capture_output=True, text=True).stdout.split()
    print(json.dumps(pids), flush=True)
    time.sleep(60)
"""


@requires_root
def test_a_sigkilled_control_plane_leaves_servers_that_die_and_a_journal_the_next_run_replays():
    before = set(leftovers())
    run = subprocess.Popen([sys.executable, "-c", KILLED_RUN], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        pids = json.loads(run.stdout.readline())
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert len(pids) >= 3  # unshare, the shell, iperf3
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in pids)
    assert f"network namespace {RUN_ID}-server" in leftovers()  # until the next run
    with changes.MachineSession() as session:
        pass
    assert any(f"removed network namespace {RUN_ID}-server" in note for note in session.notes), session.notes
    assert any("did not end cleanly" in note for note in session.notes)
    assert set(leftovers()) - before == set()
