"""Tandem as a service: `./tandem serve` runs until `ctl stop`, with a control API on a Unix socket of mode 0600.
Two clients read its status at once while traffic flows; a malformed request gets a 4xx naming what is wrong and
changes nothing; live changes (an NF's arguments, the scheduler, a scaled NF's instance count) take effect under
traffic and lose no packet; `ctl stop` drains the chains, writes whole results with exact accounting, and leaves
nothing behind; `ctl` without a service says so (exit 2)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import stat
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.local_ports import free_port
from conftest import REPO, background, requires_root, runnable, tandem
from controlplane.errors import SetupError
from controlplane.launch.control_api import ROUTES, ChangeReply
from controlplane.launch.control_client import Control, _UnixConnection
from controlplane.launch.control_server import MAX_BODY

pytestmark = requires_root

SPEC = """\
name: service
traffic: {rate: 200 kpps, size: 64, flows: 16}
scheduler: coop
chains:
  - name: web
    nfs:
      - {name: fw, type: firewall, core: 1, args: {synthetic_rules: 10}}
      - {name: check, type: checkip, core: 1}
"""


@contextlib.contextmanager
def serving(spec, socket, out, *extra: str, reach: tuple[str, ...] = ()):
    """`./tandem serve SPEC` in the background, once its status shows the chains (asked through `reach`, the socket
    by default); killed and reaped on every way out."""
    with background("serve", str(spec), "--socket", str(socket), "--json", str(out), "--quiet", *extra) as process:
        reach = reach or ("--socket", str(socket))
        # unis needs the NFs' costs: a service ready for it profiles them first; in a VM of emulated CPUs
        # (bench/many_core_host.py) the processes start slowly too.
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and process.poll() is None:
            status = tandem("ctl", "status", *reach, "--json")
            if status.returncode == 0 and json.loads(status.stdout)["chains"]:
                break
            time.sleep(0.3)
        else:
            if process.poll() is None:  # still starting: stopped as a user would, what it said kept
                process.terminate()
            try:
                _, stderr = process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                stderr = "(it did not stop within 60 s of SIGTERM)"
            raise AssertionError(f"the service did not come up ({process.returncode}): {stderr[-4000:]}")
        try:
            yield process
        except (AssertionError, SetupError) as error:
            # What the service said, on the failure of a test that had it running (stopped first, as a user would).
            if process.poll() is None:
                process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                stdout, stderr = process.communicate(timeout=60)
                raise AssertionError(f"{error}\nthe service ({process.returncode}) said:\n{stderr[-4000:]}") from error
            raise


def request(socket, method: str, path: str, body: bytes | None = None) -> tuple[int, dict]:
    connection = _UnixConnection(socket, 5)
    try:
        connection.request(method, path, body=body)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_a_service_answers_two_clients_refuses_bad_requests_and_stops_whole(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SPEC), socket, out) as process:
        assert stat.S_IMODE(os.stat(socket).st_mode) == 0o600  # its owner's alone
        with ThreadPoolExecutor(2) as pool:  # two ctl clients at once
            answers = list(pool.map(lambda _: tandem("ctl", "status", "--socket", str(socket), "--json"), range(2)))
        for answer in answers:
            assert answer.returncode == 0, answer.stderr
            status = json.loads(answer.stdout)
            assert status["scheduler"] == "coop" and status["chains"][0]["delivered"] > 0
            assert {nf["name"] for nf in status["nfs"]} == {"fw", "check"}
            assert all(nf["pid"] > 0 and nf["core"] == 1 for nf in status["nfs"])
        table = tandem("ctl", "status", "--socket", str(socket))
        assert table.returncode == 0 and "Mpps now" in table.stdout and "fw" in table.stdout
        # Malformed requests: answered with the field that is wrong, the service unchanged.
        assert request(socket, "GET", "/reboot") == (404, request(socket, "GET", "/reboot")[1])
        code, body = request(socket, "GET", "/stop")
        assert code == 405 and body["field"] == "method"
        code, body = request(socket, "POST", "/stop", b'{"now": "please"}')
        assert code == 400 and body["field"] == "body"
        code, body = request(socket, "GET", "/status", b"x" * (MAX_BODY + 1))
        assert code == 413 and body["field"] == "body"
        code, document = request(socket, "GET", "/openapi.json")
        assert code == 200 and set(document["paths"]) == set(ROUTES)
        assert process.poll() is None  # still serving
        stopped = tandem("ctl", "stop", "--socket", str(socket))
        assert stopped.returncode == 0, stopped.stderr
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"] and results["accounting"]["in_flight"] == 0, [
        results["accounting"],
        [chain["in_flight"] for chain in results["chains"]],
    ]
    assert results["chains"][0]["delivered"] > 0
    assert not socket.exists()


def test_ctl_without_a_service_says_so(tmp_path):
    result = tandem("ctl", "status", "--socket", str(tmp_path / "none.sock"))
    assert result.returncode == 2
    assert "no Tandem service listens at" in result.stderr and "Traceback" not in result.stderr


def test_a_control_socket_path_that_holds_a_file_is_refused_and_the_file_kept(write_spec, tmp_path, machine_before):
    precious = tmp_path / "notes.txt"
    precious.write_text("mine")
    result = tandem("serve", str(write_spec(SPEC)), "--socket", str(precious), "--quiet")
    assert result.returncode == 2 and "is not a socket" in result.stderr, result.stderr
    assert precious.read_text() == "mine"


def test_a_lab_served_outlives_its_clients_until_stopped(tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(REPO / "examples" / "lab-waf.yaml", socket, out) as process:
        # The clients (two pages, two refused attacks of 2 s each, then a split request and a refused split attack):
        # seen to start, then seen to be done.
        def clients_running() -> bool:
            return subprocess.run(["pgrep", "-f", "curl --silent|split_request"], capture_output=True).returncode == 0

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not clients_running():
            time.sleep(0.05)
        seen = time.monotonic()  # done: no client for 1.5 s (one follows another within 50 ms)
        while time.monotonic() < deadline and time.monotonic() - seen < 1.5:
            seen = time.monotonic() if clients_running() else seen
            time.sleep(0.05)
        assert process.poll() is None  # its clients are done; the service is not
        status = json.loads(tandem("ctl", "status", "--socket", str(socket), "--json").stdout)
        assert {chain["name"] for chain in status["chains"]} == {"requests", "answers"}
        assert tandem("ctl", "stop", "--socket", str(socket)).returncode == 0
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"] and all(record["met"] for record in results["lab"]), results["lab"]


# Status is the data plane's report of every 250 ms: a figure that must move is read again after twice that.
STATUS_PERIOD = 0.6


def ctl(socket, *words: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO / "tandem"), "ctl", *words, "--socket", str(socket), "--json"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def answered(socket, reply: dict) -> dict:
    """A change's answer, as the service's client follows a `pending` one (Control.answer_of)."""
    return Control(socket).answer_of(ChangeReply.model_validate(reply)).model_dump(exclude_none=True)


def nf_status(socket, name: str) -> dict:
    status = json.loads(ctl(socket, "status").stdout)
    return next(nf for nf in status["nfs"] if nf["name"] == name) | {"scheduler": status["scheduler"]}


def results_when_stopped(socket, process, out) -> dict:
    """The service stopped by `ctl stop`, as it ends: exit status 0 and its results."""
    assert ctl(socket, "stop").returncode == 0
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    return json.loads(out.read_text())


def takes_packets(socket, name: str, wait_s: float = STATUS_PERIOD) -> bool:
    """Whether NF `name` takes packets: more in its status after `wait_s` than before."""
    before = nf_status(socket, name)["packets_in"]
    time.sleep(wait_s)
    return nf_status(socket, name)["packets_in"] > before


def test_live_changes_under_traffic_take_effect_whole_and_lose_nothing(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SPEC), socket, out, "--ready-for", "unis") as process:
        assert nf_status(socket, "fw")["packets_dropped"] == 0  # its rules allow everything the generator sends
        # The NF core is the NFs' alone: this client is off it, and a process born now too, until the service ends.
        assert 1 not in os.sched_getaffinity(0)
        born_meanwhile = subprocess.Popen(["sleep", "120"])
        assert 1 not in os.sched_getaffinity(born_meanwhile.pid)
        # New rules (deny everything): applied between two batches, without a packet lost to a full ring.
        denied = ctl(socket, "args", "fw", "-", stdin="{synthetic_rules: 10, default: deny}")
        assert denied.returncode == 0, denied.stderr
        change = answered(socket, json.loads(denied.stdout))
        assert change["state"] == "applied" and change["ring_drops_during"] == 0 and change["build_us"] > 0
        time.sleep(STATUS_PERIOD)
        first, later = nf_status(socket, "fw"), (time.sleep(STATUS_PERIOD), nf_status(socket, "fw"))[1]
        assert later["packets_dropped"] > first["packets_dropped"] > 0  # the new rules deny
        check_in = nf_status(socket, "check")["packets_in"]
        # Malformed arguments: refused naming the field, the running rules unchanged.
        bad = ctl(socket, "args", "fw", "-", stdin="{rules: [{dst_port: 99999, action: deny}]}")
        assert bad.returncode == 2 and "body.args.rules[0].dst_port" in bad.stderr, bad.stderr
        assert ctl(socket, "args", "nobody", "-", stdin="{}").returncode == 2
        time.sleep(STATUS_PERIOD)
        assert nf_status(socket, "check")["packets_in"] == check_in  # still everything denied
        # Two clients at once: both changes applied, one after the other.
        with ThreadPoolExecutor(2) as pool:
            both = list(pool.map(lambda text: ctl(socket, "args", "fw", "-", stdin=text), ["{}", "{rules: []}"]))
        assert all(answer.returncode == 0 for answer in both), [answer.stderr for answer in both]
        changes = [answered(socket, json.loads(answer.stdout)) for answer in both]
        assert sorted(change["generation"] for change in changes) == [2, 3], changes
        time.sleep(STATUS_PERIOD)
        assert nf_status(socket, "check")["packets_in"] > check_in  # allowed again
        # The scheduler switched under traffic, to one the service was made ready for, and back.
        for name in ("unis", "coop"):
            switched = ctl(socket, "scheduler", name)
            assert switched.returncode == 0 and json.loads(switched.stdout)["state"] == "applied", switched.stderr
            before = nf_status(socket, "check")["packets_in"]
            time.sleep(STATUS_PERIOD)
            now = nf_status(socket, "check")
            assert now["scheduler"] == name and now["packets_in"] > before
        assert ctl(socket, "stop").returncode == 0
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    try:
        assert os.sched_getaffinity(born_meanwhile.pid) == os.sched_getaffinity(0), "its cores were given back"
    finally:
        born_meanwhile.kill()
        born_meanwhile.wait()
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"] and results["accounting"]["in_flight"] == 0, results["accounting"]
    applied = [change for change in results["changes"] if change["state"] == "applied"]
    assert [change["op"] for change in applied] == ["set_args"] * 3 + ["set_scheduler"] * 2
    assert all(change["ring_drops_during"] == 0 for change in applied if change["op"] == "set_args"), applied
    assert results["scheduler"]["name"] == "coop"


# check replaced by an NF that needs 2e10 cycles a second at the spec's 200 kpps, over twice what any core has.
OVERLOADED_SPEC = SPEC.replace(
    "{name: check, type: checkip, core: 1}", "{name: work, type: cost, core: 1, args: {cycles: 100000}}"
)


def test_a_change_tells_which_rings_dropped_while_it_was_made(write_spec, tmp_path, machine_before):
    # The chain's rings overflow all along (which of them, the share of the core coop gives each NF decides), and a
    # change made meanwhile says so, by ring.
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(OVERLOADED_SPEC), socket, out) as process:
        time.sleep(STATUS_PERIOD)
        changed = ctl(socket, "args", "fw", "-", stdin="{synthetic_rules: 20}")
        assert changed.returncode == 0, changed.stderr
        change = answered(socket, json.loads(changed.stdout))
        by_ring = change["ring_drops_by_ring"]
        assert change["state"] == "applied" and change["ring_drops_during"] > 0, change
        assert by_ring and set(by_ring) <= {"web:entry", "web:fw->work", "web:exit"}, by_ring
        assert sum(by_ring.values()) == change["ring_drops_during"] and all(n > 0 for n in by_ring.values()), by_ring
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"], results["accounting"]
    # Each ring's drops in the change are within what it dropped in the whole run.
    whole = {ring["name"]: ring["dropped_full"] for ring in results["rings"]}
    assert all(n <= whole[ring] for ring, n in by_ring.items()), (by_ring, whole)


SCALED_SPEC = """\
name: scaled-service
traffic: {rate: 100 kpps, size: 64, flows: 64}
scheduler: coop
chains:
  - name: web
    nfs:
      - {name: check, type: checkip, core: 1}
      - {name: fw, type: firewall, core: 1, args: {synthetic_rules: 10},
         scale: {max_instances: 3, cores: [1, 1], idle_ms: 200, cooldown_ms: 0}}
"""


def test_a_scaled_nf_is_scaled_by_command_keeps_its_count_through_relayouts_and_goes_back_to_its_rule(
    write_spec, tmp_path, machine_before
):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SCALED_SPEC), socket, out) as process:
        # Out to all three instances: applied once every flow's old instance was done, without a full ring's drop.
        scaled = ctl(socket, "scale", "fw", "3")
        assert scaled.returncode == 0, scaled.stderr
        change = answered(socket, json.loads(scaled.stdout))
        assert change["state"] == "applied" and change["instances"] == 3 and change["instances_before"] == 1, change
        assert change["ring_drops_during"] == 0
        # The count holds: 100 kpps needs far less than two instances' worth of a core, so the rule (idle_ms 200)
        # would give instances back within a second; the command paused it.
        assert takes_packets(socket, "fw.3", 5 * 0.2 + STATUS_PERIOD)  # the third instance takes flows
        # Refused, naming what is wrong, nothing changed: beyond max_instances, an NF without scale, not a count.
        beyond = ctl(socket, "scale", "fw", "4")
        assert beyond.returncode == 2 and "max_instances (3)" in beyond.stderr and "body.instances" in beyond.stderr
        unscaled = ctl(socket, "scale", "check", "2")  # first in its chain, before the scaled NF
        assert unscaled.returncode == 2 and "is not scaled" in unscaled.stderr, unscaled.stderr
        assert ctl(socket, "scale", "fw", "two").returncode == 2
        # A scheduler that runs the NFs in other processes (rtc: one for the core's NFs, instances included), and
        # back: the new processes' egresses spread the flows over the three instances again, nothing lost.
        for scheduler, workers in (("rtc", {"rtc@core1"}), ("coop", {"check", "fw", "fw.2", "fw.3"})):
            switched = ctl(socket, "scheduler", scheduler)
            assert switched.returncode == 0, switched.stderr
            change = answered(socket, json.loads(switched.stdout))
            assert change["state"] == "applied" and change["relayout"], change
            assert {worker["name"] for worker in change["workers"]} == workers, change["workers"]
            assert change["ring_drops_during"] == 0, change
            assert takes_packets(socket, "fw.3", 5 * 0.2 + STATUS_PERIOD)  # the count held (by command) through it
        # Back to the rule, which gives the idle instances back.
        back = ctl(socket, "scale", "fw", "auto")
        assert back.returncode == 0 and json.loads(back.stdout)["state"] == "applied", back.stderr
        time.sleep(2 * (0.2 + STATUS_PERIOD))
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"] and results["accounting"]["in_flight"] == 0, [
        results["accounting"],
        [chain["in_flight"] for chain in results["chains"]],
    ]
    (group,) = results["scaling"]
    # The command's change and the two re-layouts' (each new egress from one instance to three), then the rule's.
    assert group["switches"] >= 3, group
    commanded, *by_rule = group["events"]
    assert commanded["instances"] == 3 and commanded["reason"].startswith("asked by command"), commanded
    assert commanded["took_effect_s"] is not None
    # Every decision of the rule came after `auto`, and gave instances back.
    assert by_rule and all(event["change"] == "in" for event in by_rule), by_rule
    assert by_rule[0]["t_s"] >= next(c["t_done"] for c in results["changes"] if c.get("instances_before") == 3)
    assert not group["count_by_command_at_end"]


@pytest.mark.parametrize("scheduler", runnable(["coop", "unis", "nfvnice"]))
def test_new_arguments_reach_the_parked_spare_instances_before_their_first_flow(
    scheduler, write_spec, tmp_path, machine_before
):
    # fw's second and third instances are parked spares, asleep on their empty inputs (under UNiS never given a turn
    # by occupancy): the change is answered once they took it too, and scaled out afterwards they deny from the first
    # packet on, as the first instance does.
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SCALED_SPEC.replace("scheduler: coop", f"scheduler: {scheduler}")), socket, out) as process:
        denied = ctl(socket, "args", "fw", "-", stdin="{synthetic_rules: 10, default: deny}")
        assert denied.returncode == 0, denied.stderr
        change = answered(socket, json.loads(denied.stdout))
        assert change["state"] == "applied" and change["ring_drops_during"] == 0, change
        # Within seconds, not at some later event that happens to run the spares (a build takes well under one).
        assert change["t_done"] - change["t_requested"] < 10, change
        scaled = ctl(socket, "scale", "fw", "3")
        assert scaled.returncode == 0, scaled.stderr
        assert answered(socket, json.loads(scaled.stdout))["state"] == "applied"
        time.sleep(2 * STATUS_PERIOD)
        for name in ("fw.2", "fw.3"):
            spare = nf_status(socket, name)
            # Every packet it took, it denied (a batch may be between the two counters when status reads them).
            assert spare["packets_in"] > 0 and spare["packets_in"] - spare["packets_dropped"] <= 64, spare
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"] and results["accounting"]["in_flight"] == 0, results["accounting"]


TWO_CHAINS = """\
name: two-chains
traffic: {{rate: 100 kpps, size: 64, flows: 16}}
scheduler: {scheduler}
chains:
  - name: stays
    nfs:
      - {{name: fw, type: firewall, core: 1, args: {{synthetic_rules: 10}}}}
      - {{name: check, type: checkip, core: 1}}
  - name: goes
    nfs:
      - {{name: count, type: counter, core: 1}}
      - {{name: work, type: cost, core: 1, args: {{cycles: 200}}}}
"""


@pytest.mark.parametrize("scheduler", runnable(["coop", "unis", "nfvnice"]))
def test_a_chain_removed_under_traffic_drains_whole_and_the_other_runs_on(
    scheduler, write_spec, tmp_path, machine_before
):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(TWO_CHAINS.format(scheduler=scheduler)), socket, out) as process:
        pids = {nf["name"]: nf["pid"] for nf in json.loads(ctl(socket, "status").stdout)["nfs"]}
        removed = ctl(socket, "remove-chain", "goes")
        assert removed.returncode == 0, removed.stderr
        change = answered(socket, json.loads(removed.stdout))
        # Its entry closed first: everything inside reached the sink before its NFs were stopped, none lost.
        assert change["state"] == "applied" and change["drained"] and change["ring_drops_during"] == 0, change
        assert change["nfs_stopped"].split(",") == ["count", "work"]
        # From told to leave to reaped: the leaving processes finish on the control core. On their NF core, among
        # real-time pollers again, they got the CPU only through the kernel's fair server (50 ms in each 1 s period):
        # ~1 s whatever the host's speed. Leaving takes 10-40 ms here; 0.5 s leaves 10x for a slower or busier host.
        left_to_reaped = change["t_done"] - change["t_requested"] - change["drain_ms"] / 1e3
        assert left_to_reaped < 0.5, change
        for name in ("count", "work"):
            assert not os.path.exists(f"/proc/{pids[name]}"), name  # reaped: gone, not a zombie
        status = json.loads(ctl(socket, "status").stdout)
        goes = next(chain for chain in status["chains"] if chain["name"] == "goes")
        assert goes["removed"] and goes["generated"] == change["generated"]
        # The other chain runs on under a fresh module.
        assert takes_packets(socket, "check")
        # Refused, naming the chain, nothing changed: removed already, and a chain that is not there.
        again = ctl(socket, "remove-chain", "goes")
        assert again.returncode == 2 and "removed already" in again.stderr, again.stderr
        assert ctl(socket, "remove-chain", "nowhere").returncode == 2
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"] and results["accounting"]["in_flight"] == 0, [
        results["accounting"],
        [chain["in_flight"] for chain in results["chains"]],
    ]
    goes = next(chain for chain in results["chains"] if chain["name"] == "goes")
    # Nothing entered it after its removal, and all that did was delivered or dropped (unis's start fills a ring).
    assert goes["generated"] == change["generated"] == goes["delivered"] + goes["dropped"]["total"]
    gone = [worker for worker in results["workers"] if worker["nfs"] in ("count", "work")]
    assert [worker["exit"] for worker in gone] == ["exited with status 0"] * 2, gone


def test_a_tcp_listener_answers_only_with_its_token(write_spec, tmp_path, machine_before):
    spec, sock, out = write_spec(SPEC), tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    token_file, loose = tmp_path / "token", tmp_path / "loose-token"
    token_file.write_text("0123456789abcdef0123456789abcdef\n")
    token_file.chmod(0o600)
    loose.write_text("0123456789abcdef0123456789abcdef\n")
    loose.chmod(0o644)
    port = free_port()
    # Refused before anything runs: a token file others may read, and a listener beyond this machine without one.
    refused = tandem(
        "serve", str(spec), "--socket", str(sock), "--listen", f"127.0.0.1:{port}", "--token-file", str(loose)
    )
    assert refused.returncode == 2 and "chmod 600" in refused.stderr, refused.stderr
    refused = tandem("serve", str(spec), "--socket", str(sock), "--listen", f"0.0.0.0:{port}")
    assert refused.returncode == 2 and "needs a token" in refused.stderr, refused.stderr
    reach = ("--connect", f"127.0.0.1:{port}", "--token-file", str(token_file))
    listen = ("--listen", f"127.0.0.1:{port}", "--token-file", str(token_file))
    with serving(spec, sock, out, *listen, reach=reach) as process:
        assert json.loads(tandem("ctl", "status", *reach, "--json").stdout)["chains"][0]["delivered"] > 0
        for headers in ({}, {"Authorization": "Bearer 0123456789abcdef0123456789abcdeX"}, {"Authorization": "x"}):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("POST", "/stop", body=b"", headers=headers)
            response = connection.getresponse()
            assert response.status == 401 and json.loads(response.read())["field"] == "authorization"
            connection.close()
        without = tandem("ctl", "status", "--connect", f"127.0.0.1:{port}")
        assert without.returncode == 2 and "token" in without.stderr
        assert process.poll() is None  # no request without the token stopped it
        assert tandem("ctl", "stop", *reach).returncode == 0
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert json.loads(out.read_text())["accounting"]["exact"]


def cpus_allowed(pid: int) -> str:
    """The CPUs a process's main thread may run on, as /proc lists them ("0-1", "1")."""
    with open(f"/proc/{pid}/status") as status_file:
        status = status_file.read()
    return next(line.split()[1] for line in status.splitlines() if line.startswith("Cpus_allowed_list:"))


ADDED_CHAIN = """\
name: added
traffic: {rate: 50 kpps, flows: 8}
nfs:
  - {name: fw2, type: firewall, core: 1, args: {synthetic_rules: 10}}
  - {name: count, type: counter, core: 1, cost_cycles: 300}
"""


def service_to_add_to(write_spec, tmp_path, scheduler: str):
    """The service chains are added to: SPEC's chain at 100 kpps under `scheduler`; its spec, socket and results."""
    spec = SPEC.replace("rate: 200 kpps", "rate: 100 kpps").replace("scheduler: coop", f"scheduler: {scheduler}")
    return write_spec(spec), tmp_path / "control" / "tandem.sock", tmp_path / "results.json"


def test_a_chain_beyond_the_stats_zone_is_refused_saying_what_the_service_holds(write_spec, tmp_path, machine_before):
    # Two chains of 63 NFs under rtc (one process for the core's NFs): 126 of the 128 NFs a run holds at once. The
    # data plane answers, which knows what removed chains gave back (contract/appended_chain_test.cc).
    chains = "".join(
        f"  - name: long{c}\n    nfs:\n"
        + "".join(f"      - {{name: c{c}n{n}, type: checkip, core: 1}}\n" for n in range(63))
        for c in range(2)
    )
    spec = f"name: full\ntraffic: {{rate: 10 kpps, size: 64, flows: 4}}\nscheduler: rtc\nchains:\n{chains}"
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(spec), socket, out) as process:
        three = ADDED_CHAIN + "  - {name: check2, type: checkip, core: 1}\n"
        refused = ctl(socket, "add-chain", "-", stdin=three)
        assert refused.returncode == 2 and "(body.chain)" in refused.stderr, refused.stderr
        assert "holds 128 NFs, 256 rings and 128 chains at once" in refused.stderr, refused.stderr
        assert "it would hold 129 NFs" in refused.stderr, refused.stderr
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"] and len(results["chains"]) == 2, results["accounting"]


def lcore_id_of(pid: int) -> int:
    """The DPDK lcore id a worker process runs under (its --lcores=ID@CORE)."""
    with open(f"/proc/{pid}/cmdline") as cmdline:
        lcores = next(arg for arg in cmdline.read().split("\0") if arg.startswith("--lcores="))
    return int(lcores.removeprefix("--lcores=").split("@")[0])


def test_a_removed_chains_places_are_given_again_past_what_a_run_holds_at_once(write_spec, tmp_path, machine_before):
    # Five chains of 27 NFs, each added under traffic once the one before was removed: with the spec's two, 137 NFs
    # and 137 worker processes over the service's life, past the 128 hop stamps and the 127 lcore ids a run has at
    # once. Each takes the lowest free ones, those the first gave back; the last ones' NFs have indices past 128, so
    # their stamps are not their indices. Their packets pass the sink's check of their hop records (hop_errors), and
    # every chain's count stays in the results, exact.
    spec, socket, out = service_to_add_to(write_spec, tmp_path, "coop")
    names = [f"long{c}_" for c in range(5)]

    def long_chain(name: str) -> str:
        nfs = "".join(f"  - {{name: {name}{n}, type: checkip, core: 1}}\n" for n in range(27))
        return f"name: {name}\ntraffic: {{rate: 20 kpps, flows: 8}}\nring_capacity: 64\nnfs:\n{nfs}"

    lcore_ids = {}
    with serving(spec, socket, out) as process:
        for name in names:
            added = ctl(socket, "add-chain", "-", stdin=long_chain(name))
            assert added.returncode == 0, added.stderr
            change = answered(socket, json.loads(added.stdout))
            assert change["state"] == "applied", change
            status = json.loads(ctl(socket, "status").stdout)
            lcore_ids[name] = {lcore_id_of(nf["pid"]) for nf in status["nfs"] if nf["chain"] == name}
            assert len(lcore_ids[name]) == 27 and max(lcore_ids[name]) < 128, lcore_ids
            assert takes_packets(socket, f"{name}26")
            if name != names[-1]:
                removed = answered(socket, json.loads(ctl(socket, "remove-chain", name).stdout))
                assert removed["state"] == "applied" and removed["drained"], removed
        assert takes_packets(socket, "check")  # the spec's chain ran on throughout
        results = results_when_stopped(socket, process, out)
    assert all(ids == lcore_ids[names[0]] for ids in lcore_ids.values()), lcore_ids  # the lowest free each time
    assert results["accounting"]["exact"], results["accounting"]
    chains = {chain["name"]: chain for chain in results["chains"]}
    assert set(chains) == {"web", *names}
    for chain in chains.values():
        assert chain["delivered"] > 0 and chain["hop_errors"] == 0, chain
        assert chain["generated"] == chain["delivered"] + chain["dropped"]["total"], chain


@pytest.mark.parametrize("scheduler", runnable(["coop", "unis", "nfvnice"]))
def test_a_chain_added_under_traffic_starts_without_loss_and_can_go_again(
    scheduler, write_spec, tmp_path, machine_before
):
    spec, socket, out = service_to_add_to(write_spec, tmp_path, scheduler)
    with serving(spec, socket, out) as process:
        # Refused, naming the field, nothing started: a chain's name taken, an NF's name taken, the control core, a
        # port as its source.
        for change, field in (
            (ADDED_CHAIN.replace("name: added", "name: web"), "body.chain.name"),
            (ADDED_CHAIN.replace("name: fw2", "name: fw"), "body.chain.nfs[0].name"),
            (ADDED_CHAIN.replace("core: 1, cost", "core: 0, cost"), "body.chain.nfs[1].core"),
            (ADDED_CHAIN + "from: eth0\n", "body.chain.from"),
        ):
            refused = ctl(socket, "add-chain", "-", stdin=change)
            assert refused.returncode == 2 and f"({field})" in refused.stderr, (field, refused.stderr)
        assert [chain["name"] for chain in json.loads(ctl(socket, "status").stdout)["chains"]] == ["web"]
        added = ctl(socket, "add-chain", "-", stdin=ADDED_CHAIN)
        assert added.returncode == 0, added.stderr
        change = answered(socket, json.loads(added.stdout))
        # Its processes started while the other chain's traffic flowed, held until it joined: no ring overflowed.
        assert change["state"] == "applied" and change["ring_drops_during"] == 0, change
        assert change["nfs_started"] == "fw2,count" and all(worker["core"] == 1 for worker in change["workers"])
        time.sleep(STATUS_PERIOD)
        status = json.loads(ctl(socket, "status").stdout)
        chain = next(chain for chain in status["chains"] if chain["name"] == "added")
        assert chain["delivered"] > 0 and not chain["removed"]
        pids = {nf["name"]: nf["pid"] for nf in status["nfs"] if nf["chain"] == "added"}
        assert set(pids) == {"fw2", "count"} and all(os.path.exists(f"/proc/{pid}") for pid in pids.values())
        # They started on the control core (their lcore there: on their own core, below unis's real-time pollers, a
        # start gets the CPU only through the kernel's fair server, which takes it from them), and poll on theirs.
        for pid in pids.values():
            with open(f"/proc/{pid}/cmdline") as cmdline:
                lcores = next(arg for arg in cmdline.read().split("\0") if arg.startswith("--lcores="))
            assert lcores.endswith("@0") and cpus_allowed(pid) == "1", (lcores, cpus_allowed(pid))
        assert takes_packets(socket, "check")  # the first chain runs on beside it
        again = ctl(socket, "add-chain", "-", stdin=ADDED_CHAIN)
        assert again.returncode == 2 and "(body.chain.name)" in again.stderr, again.stderr
        # An NF's name is one NF's over the service's life: an added chain's are taken as the spec's are.
        other = ADDED_CHAIN.replace("name: added", "name: other")
        taken = ctl(socket, "add-chain", "-", stdin=other)
        assert taken.returncode == 2 and "(body.chain.nfs[0].name)" in taken.stderr, taken.stderr
        assert "an NF named 'fw2' is in the service (chain 'added')" in taken.stderr, taken.stderr
        # An added chain goes as any other.
        removed = answered(socket, json.loads(ctl(socket, "remove-chain", "added").stdout))
        assert removed["state"] == "applied" and removed["nfs_stopped"] == "fw2,count", removed
        taken = ctl(socket, "add-chain", "-", stdin=other.replace("name: fw2", "name: fw3"))
        assert taken.returncode == 2 and "(body.chain.nfs[1].name)" in taken.stderr, taken.stderr
        assert "'count' is in the service (chain 'added', removed" in taken.stderr, taken.stderr
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"], results["accounting"]
    added = next(chain for chain in results["chains"] if chain["name"] == "added")
    assert added["delivered"] > 0 and added["generated"] == added["delivered"] + added["dropped"]["total"]
    workers = {worker["nfs"]: worker for worker in results["workers"]}
    assert workers["fw2"]["exit"] == workers["count"]["exit"] == "exited with status 0"


ADDED_SCALED_CHAIN = """\
name: scaled
traffic: {rate: 50 kpps, flows: 64}
ring_capacity: 512  # its rings and the scaled NF's hold fit in what the service's packet pool keeps spare
nfs:
  - {name: tag, type: counter, core: 1, cost_cycles: 300}
  - {name: fw3, type: firewall, core: 1, args: {synthetic_rules: 10},
     scale: {max_instances: 2, idle_ms: 200, cooldown_ms: 0}}
"""


@pytest.mark.parametrize("scheduler", runnable(["coop", "unis", "nfvnice"]))
def test_a_chain_with_a_scaled_nf_added_live_scales_by_command_and_goes_whole(
    scheduler, write_spec, tmp_path, machine_before
):
    spec, socket, out = service_to_add_to(write_spec, tmp_path, scheduler)
    with serving(spec, socket, out) as process:
        adding = ctl(socket, "add-chain", "-", stdin=ADDED_SCALED_CHAIN)
        assert adding.returncode == 0, adding.stderr
        added = answered(socket, json.loads(adding.stdout))
        # Every instance it may use started with it (the spare parked), none of the running chain's packets lost.
        assert added["state"] == "applied" and added["ring_drops_during"] == 0, added
        assert added["nfs_started"] == "tag,fw3,fw3.2", added
        time.sleep(STATUS_PERIOD)
        assert nf_status(socket, "fw3")["packets_in"] > 0 and nf_status(socket, "fw3.2")["packets_in"] == 0
        # Its rule follows it as a started one's does: a command takes it out to the spare, which then takes flows.
        scaled = answered(socket, json.loads(ctl(socket, "scale", "fw3", "2").stdout))
        assert scaled["state"] == "applied" and scaled["instances"] == 2 and scaled["instances_before"] == 1, scaled
        assert scaled["ring_drops_during"] == 0, scaled
        assert takes_packets(socket, "fw3.2")
        removed = answered(socket, json.loads(ctl(socket, "remove-chain", "scaled").stdout))
        assert removed["state"] == "applied" and removed["nfs_stopped"] == "tag,fw3,fw3.2", removed
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"] and results["accounting"]["in_flight"] == 0, results["accounting"]
    chain = next(chain for chain in results["chains"] if chain["name"] == "scaled")
    assert chain["delivered"] > 0 and chain["generated"] == chain["delivered"] + chain["dropped"]["total"]
    (group,) = results["scaling"]
    # The command's is the last change: the count is by command from then on. (On an emulated CPU the autoscaler's own
    # rule took fw3 out and in again before the command came: 96 packets dropped at its input over 104 ms.)
    assert group["nf"] == "fw3" and group["events"][-1]["reason"].startswith("asked by command"), group
    workers = {worker["nfs"]: worker for worker in results["workers"]}
    assert {workers[name]["exit"] for name in ("tag", "fw3", "fw3.2")} == {"exited with status 0"}
