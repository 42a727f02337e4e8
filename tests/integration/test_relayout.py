"""A service's scheduler switched live to one that lays the NFs out in other processes (coop's process per NF, rtc's
one per core, Bubble's user-level threads): the entries held, the NFs drained, the old processes replaced by new ones
on the same rings and counters, the entries let go. Under generator traffic every packet arrives, the new processes
take the arguments changed live before; under iperf3 through a lab the transfer goes on to its end; testpmd's
process runs on through unis to hybrid and back; the accounting is exact every time."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import background, requires_root
from integration.test_service import (
    OVERLOADED_SPEC,
    STATUS_PERIOD,
    TWO_CHAINS,
    answered,
    ctl,
    results_when_stopped,
    serving,
    takes_packets,
)
from integration.test_service import SPEC as SERVICE_SPEC

pytestmark = requires_root

# The service's chain with a third NF: three processes under coop, one under rtc and Bubble.
SPEC = SERVICE_SPEC + "      - {name: count, type: counter, core: 1}\n"
NFS = ["fw", "check", "count"]
# Each switch and the worker processes it lays the three NFs out in: one per NF, or all in one per core.
SWITCHES = [
    ("rtc", {"rtc@core1"}),
    ("bubble", {"bubble@core1"}),
    ("unis", set(NFS)),
    ("bubble", {"bubble@core1"}),
    ("coop", set(NFS)),
]


def status(socket) -> dict:
    return json.loads(ctl(socket, "status").stdout)


def nfs_by_name(socket) -> dict:
    return {nf["name"]: nf for nf in status(socket)["nfs"]}


def test_the_nfs_relaid_out_under_traffic_lose_nothing_and_keep_their_arguments(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SPEC), socket, out, "--ready-for", "unis") as process:
        denied = ctl(socket, "args", "fw", "-", stdin="{synthetic_rules: 10, default: deny}")
        assert answered(socket, json.loads(denied.stdout))["state"] == "applied", denied.stderr
        for name, workers in SWITCHES:
            pids_before = {nf["pid"] for nf in nfs_by_name(socket).values()}
            switched = ctl(socket, "scheduler", name)
            assert switched.returncode == 0, switched.stderr
            change = json.loads(switched.stdout)
            assert change["state"] == "applied" and change["relayout"], change
            assert {worker["name"] for worker in change["workers"]} == workers, change["workers"]
            # The new processes started beside the old ones, which carried the traffic meanwhile; then nothing is
            # generated while the entries are held: no ring fills, however long the NFs took to drain.
            assert change["staged_ms"] > 0 and all(worker["staged"] for worker in change["workers"]), change
            assert change["ring_drops_during"] == 0 and change["held_ms"] >= change["drain_ms"], change
            time.sleep(STATUS_PERIOD)
            before = nfs_by_name(socket)
            assert {nf["worker"] for nf in before.values()} == workers, before
            assert not pids_before & {nf["pid"] for nf in before.values()}  # new processes
            time.sleep(STATUS_PERIOD)
            after = nfs_by_name(socket)
            assert status(socket)["scheduler"] == name
            # The new processes took the rules changed live: fw denies everything, nothing passes it.
            assert after["fw"]["packets_dropped"] > before["fw"]["packets_dropped"], (before, after)
            assert after["check"]["packets_in"] == before["check"]["packets_in"]
        allowed = ctl(socket, "args", "fw", "-", stdin="{synthetic_rules: 10}")
        assert answered(socket, json.loads(allowed.stdout))["state"] == "applied", allowed.stderr
        time.sleep(STATUS_PERIOD)
        first = nfs_by_name(socket)["count"]["packets_in"]
        time.sleep(STATUS_PERIOD)
        assert nfs_by_name(socket)["count"]["packets_in"] > first
        results = results_when_stopped(socket, process, out)
    accounting = results["accounting"]
    assert accounting["exact"] and accounting["in_flight"] == 0 and accounting["clean_workers_hold_nothing"], accounting
    (chain,) = results["chains"]
    fw = next(nf for nf in results["nfs"] if nf["name"] == "fw")
    # Every packet generated was delivered or denied by fw, but for what full rings dropped; the switches' holds
    # dropped none (ring_drops_during above). Between them a ring may overflow all the same: at 200 kpps the entry
    # ring's 2,048 packets last 10 ms, and the NF core's vCPU of this VM stalls that long now and then (the entry ring
    # overflowed in about 1 run in 8 here, never in a switch's window or the 300 ms after it; the one traced, under
    # bubble 2 s after the switch, which runs clean on its own).
    ring_drops = sum(ring["dropped_full"] for ring in results["rings"])
    assert chain["generated"] == chain["delivered"] + fw["packets_dropped"] + ring_drops, (chain, fw)
    switches = [change for change in results["changes"] if change["op"] == "set_scheduler"]
    assert [change["scheduler"] for change in switches] == [name for name, _ in SWITCHES]
    assert all(change["state"] == "applied" and change["relayout"] for change in switches), switches
    assert results["scheduler"]["name"] == "coop"
    # What fw counted itself, over its instances (two argument changes, six processes, and one more for each time a
    # switch started the old layout again to finish its drain), adds up to what the runtime counted of it: each
    # instance's report kept as it ended, the last one's at the end.
    processes_replaced = len(SWITCHES) + sum(change["drain_restarts"] for change in switches)
    ended = [earlier["ended"] for earlier in fw["earlier_reports"]]
    assert ended == ["new arguments"] + ["re-layout"] * processes_replaced + ["new arguments"], ended
    reports = [fw["report"], *(earlier["report"] for earlier in fw["earlier_reports"])]
    assert sum(report["allowed"] + report["denied"] for report in reports) == fw["packets_in"], reports
    assert sum(report["denied"] for report in reports) == fw["packets_dropped"], reports


def kill_the_first_staged_process(within_s: float = 30) -> int:
    """SIGKILL, as the OOM killer or an operator might, to a switch's first new process (`--staging` in its command
    line) once the second is seen: the manager starts each once the one before attached, so the first was waiting
    for the hand-over, not in DPDK's start, where a process killed may leave a lock of the shared memory taken."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-f", "--", "--staging"], capture_output=True, text=True).stdout.split()
        if len(found) >= 2:
            pid = min(int(pid) for pid in found)
            os.kill(pid, signal.SIGKILL)
            return pid
        time.sleep(0.005)
    raise AssertionError(f"no second staged process seen within {within_s} s")


def test_a_switch_under_overload_says_what_the_old_layout_dropped_before_the_hold_and_the_switch_after_it(
    write_spec, tmp_path, machine_before
):
    # A chain offered far more than its core carries overflows its rings all along: while the new processes start
    # beside the old ones (staged), the old layout drops what it always drops; once the entries are held nothing
    # enters, and the module's order drains the full rings without overflowing one.
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(OVERLOADED_SPEC), socket, out, "--ready-for", "rtc") as process:
        time.sleep(STATUS_PERIOD)
        switched = ctl(socket, "scheduler", "rtc")
        assert switched.returncode == 0, switched.stderr
        change = json.loads(switched.stdout)
        assert change["state"] == "applied" and change["relayout"] and change["staged_ms"] > 0, change
        assert change["ring_drops_during"] > 0, json.dumps(change)  # the overload's, while staging
        assert change["ring_drops_while_held"] == 0, json.dumps(change)
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"], results["accounting"]


def test_a_new_process_killed_before_the_hand_over_refuses_the_switch_and_the_old_layout_runs_on(
    write_spec, tmp_path, machine_before
):
    """A switch's new processes start beside the running ones while the traffic flows (run_relayout_staging.cc). One
    killed before the hand-over refuses the switch, naming its NF, with nothing changed: the old process forwards on
    under its module. The same switch asked again is applied, and nothing is lost."""
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(
        write_spec(SPEC.replace("scheduler: coop", "scheduler: rtc")), socket, out, "--ready-for", "coop"
    ) as process:
        before = nfs_by_name(socket)
        with background("ctl", "scheduler", "coop", "--socket", str(socket), "--json") as asking:
            killed = kill_the_first_staged_process()
            _, stderr = asking.communicate(timeout=60)
        assert asking.returncode == 2, stderr
        assert "NF fw's new process ended before the hand-over: killed by signal 9" in stderr, stderr
        assert "nothing was changed" in stderr, stderr
        assert not os.path.exists(f"/proc/{killed}")  # reaped
        assert subprocess.run(["pgrep", "-f", "--", "--staging"], capture_output=True).returncode == 1  # none left
        after = nfs_by_name(socket)
        assert status(socket)["scheduler"] == "rtc" and after["fw"]["pid"] == before["fw"]["pid"], after
        assert takes_packets(socket, "count")
        switched = ctl(socket, "scheduler", "coop")
        assert switched.returncode == 0, switched.stderr
        change = json.loads(switched.stdout)
        assert change["state"] == "applied" and all(worker["staged"] for worker in change["workers"]), change
        assert takes_packets(socket, "count")
        results = results_when_stopped(socket, process, out)
    accounting = results["accounting"]
    assert accounting["exact"] and accounting["in_flight"] == 0 and accounting["clean_workers_hold_nothing"], accounting
    assert not results["warnings"], results["warnings"]


# iperf3 runs 20 s: the three switches below (each a ctl process and a drain) once took more than 11 s on a busy
# host, and the transfer must outlast them.
LAB_SPEC = """\
name: lab-relayout
scheduler: {name: coop, options: {k: 8}}
lab:
  hosts:
    - name: client
      run:
        - {command: "iperf3 --client {server} --time 20 --json", time_limit: 50}
    - name: server
      serve: ["iperf3 --server"]
chains:
  - name: to-server
    from: client
    to: server
    nfs:
      - {name: fw1, type: firewall, core: 1, args: {synthetic_rules: 100}}
      - {name: fw2, type: firewall, core: 1, args: {synthetic_rules: 100}}
  - name: to-client
    from: server
    to: client
    nfs:
      - {name: fw3, type: firewall, core: 1, args: {synthetic_rules: 100}}
"""


def iperf3_client_running() -> bool:
    return subprocess.run(["pgrep", "-f", "iperf3 --client"], capture_output=True).returncode == 0


def test_iperf3_through_a_lab_runs_to_its_end_while_the_nfs_are_relaid_out(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(LAB_SPEC), socket, out) as process:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not iperf3_client_running():
            time.sleep(0.05)
        assert iperf3_client_running(), "iperf3 did not start"
        time.sleep(1)
        for name in ("rtc", "bubble", "coop"):
            switched = ctl(socket, "scheduler", name)
            assert switched.returncode == 0 and json.loads(switched.stdout)["state"] == "applied", switched.stderr
            time.sleep(0.5)
        assert iperf3_client_running(), "the switches outlasted iperf3's transfer: nothing was measured under them"
        while time.monotonic() < deadline + 30 and iperf3_client_running():
            time.sleep(0.2)
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"], results["accounting"]
    client = next(record for record in results["lab"] if record["role"] == "run")
    assert client["met"] and client["exit_status"] == 0, client
    assert client["figures"]["goodput_bps"] > 0, client["figures"]
    # What the ports took from the kernel went to the chains (their deliveries) or was passed (ARP), each frame once.
    ports = {port["name"]: port for port in results["ports"]}
    chains = {chain["name"]: chain for chain in results["chains"]}
    assert all(port["exact"] for port in ports.values()), ports
    assert ports["server"]["transmitted"] == chains["to-server"]["delivered"] + ports["client"]["passed"]
    assert [change["scheduler"] for change in results["changes"]] == ["rtc", "bubble", "coop"]


def test_a_removed_chains_nfs_stay_out_of_the_new_layout(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(TWO_CHAINS.format(scheduler="coop")), socket, out) as process:
        removed = answered(socket, json.loads(ctl(socket, "remove-chain", "goes").stdout))
        assert removed["state"] == "applied", removed
        for name, workers in (("rtc", [("rtc@core1", "fw,check")]), ("coop", [("fw", "fw"), ("check", "check")])):
            switched = ctl(socket, "scheduler", name)
            assert switched.returncode == 0, switched.stderr
            change = json.loads(switched.stdout)
            assert [(worker["name"], worker["nfs"]) for worker in change["workers"]] == workers, change
            assert takes_packets(socket, "check")
        # Its NFs have no process left to take arguments: refused, naming the chain, whatever the arguments say.
        for args in ("{}", "{no_such_argument: 1}"):
            refused = ctl(socket, "args", "count", "-", stdin=args)
            assert refused.returncode == 2 and "(path): 'count' is an NF of chain goes, removed" in refused.stderr, (
                refused.stderr
            )
        results = results_when_stopped(socket, process, out)
    assert results["accounting"]["exact"] and results["accounting"]["in_flight"] == 0, results["accounting"]
    goes = next(chain for chain in results["chains"] if chain["name"] == "goes")
    assert goes["generated"] == removed["generated"] == goes["delivered"] + goes["dropped"]["total"]


# fw -> count -> ttl -> testpmd on one core: unis runs each native NF as a process of its own, hybrid the three as
# consecutive calls in one worker that UNiS switches against testpmd. Costs given: neither profiles first.
TESTPMD_CHAINS = """\
chains:
  - name: mixed
    nfs:
      - {name: fw, type: firewall, core: 1, cost_cycles: 60, args: {synthetic_rules: 10}}
      - {name: count, type: counter, core: 1, cost_cycles: 30}
      - {name: ttl, type: ttl, core: 1, cost_cycles: 30}
      - {name: pmd, type: external, core: 1, cost_cycles: 30, args: {forward_mode: macswap}}
"""
TESTPMD_SPEC = (
    "name: native-and-testpmd\ntraffic: {rate: 100 kpps, size: 64, flows: 16}\nscheduler: unis\n" + TESTPMD_CHAINS
)


@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="dpdk-testpmd (Debian package dpdk) is missing")
def test_an_unmodified_application_keeps_its_process_while_the_nfs_around_it_are_relaid_out(
    write_spec, tmp_path, machine_before
):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(TESTPMD_SPEC), socket, out, "--ready-for", "hybrid") as process:
        testpmd = nfs_by_name(socket)["pmd"]["pid"]
        for name, workers in (("hybrid", {"native@core1", "pmd"}), ("unis", {"fw", "count", "ttl", "pmd"})):
            switched = ctl(socket, "scheduler", name)
            assert switched.returncode == 0, switched.stderr
            change = json.loads(switched.stdout)
            assert change["state"] == "applied" and change["relayout"], change
            assert {worker["name"] for worker in change["workers"]} == workers, change["workers"]
            assert change["ring_drops_during"] == 0, change
            # The same testpmd process, forwarding for the new layout's workers.
            assert next(worker["pid"] for worker in change["workers"] if worker["name"] == "pmd") == testpmd
            assert takes_packets(socket, "pmd") and nfs_by_name(socket)["pmd"]["pid"] == testpmd
        results = results_when_stopped(socket, process, out)
    accounting = results["accounting"]
    assert accounting["exact"] and accounting["in_flight"] == 0 and accounting["clean_workers_hold_nothing"], accounting
    (chain,) = results["chains"]
    ring_drops = sum(ring["dropped_full"] for ring in results["rings"])
    assert chain["generated"] == chain["delivered"] + ring_drops, chain
    assert [change["scheduler"] for change in results["changes"]] == ["hybrid", "unis"]
    pmd = next(worker for worker in results["workers"] if worker["nfs"] == "pmd")
    assert pmd["pid"] == testpmd and pmd["exit"] == "exited with status 0", pmd


# testpmd restarts whenever it dies: killed once, it comes back under the same name, and a re-layout later keeps its
# new process with its restart records, from which the run's end tells what the dead one held from what it freed.
RESTARTED_TESTPMD_SPEC = TESTPMD_SPEC.replace("forward_mode: macswap}}", "forward_mode: macswap}, restart: always}")


@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="dpdk-testpmd (Debian package dpdk) is missing")
def test_the_nfs_around_a_restarted_application_are_relaid_out_and_what_its_dead_process_held_is_counted(
    write_spec, tmp_path, machine_before
):
    assert "restart: always" in RESTARTED_TESTPMD_SPEC
    # A kill inside a ring operation cuts shared state no restart can mend: the service then ends naming the NF (the
    # other branch of that decision; test_external.py). The kill comes at a random instant, so a few tries.
    for attempt in range(4):
        socket, out = tmp_path / f"control{attempt}" / "tandem.sock", tmp_path / f"results{attempt}.json"
        with serving(write_spec(RESTARTED_TESTPMD_SPEC), socket, out, "--ready-for", "hybrid") as process:
            victim = nfs_by_name(socket)["pmd"]["pid"]
            time.sleep(1.0)
            os.kill(victim, signal.SIGKILL)
            deadline = time.monotonic() + 60
            while process.poll() is None and time.monotonic() < deadline:
                pmd = nfs_by_name(socket).get("pmd", {})
                if pmd.get("restarts") == 1 and not pmd.get("down") and pmd.get("pid") not in (None, victim):
                    break
                time.sleep(0.2)
            if process.poll() is not None:
                _, stderr = process.communicate(timeout=60)
                assert "in the middle of a ring or pool operation" in stderr, stderr
                continue
            restarted = nfs_by_name(socket)["pmd"]["pid"]
            assert restarted != victim and takes_packets(socket, "pmd")
            switched = ctl(socket, "scheduler", "hybrid")
            assert switched.returncode == 0, switched.stderr
            change = json.loads(switched.stdout)
            assert change["state"] == "applied" and change["relayout"], change
            assert {worker["name"] for worker in change["workers"]} == {"native@core1", "pmd"}, change["workers"]
            assert next(worker["pid"] for worker in change["workers"] if worker["name"] == "pmd") == restarted
            assert takes_packets(socket, "pmd") and nfs_by_name(socket)["pmd"]["restarts"] == 1
            results = results_when_stopped(socket, process, out)
        break
    else:
        raise AssertionError("every kill came inside a ring operation")
    (restart,) = results["restarts"]
    assert restart["nfs"] == "pmd" and restart["pid"] == restarted, restart
    # What the dead process received and did not send it held (lost) or freed on a full ring: told apart by the pool at
    # the end, after the re-layout, and the counters balance with it. It holds one burst (32) at most.
    (chain,) = results["chains"]
    lost = chain["dropped"]["lost_at_crash"].get("pmd", 0)
    assert 0 <= lost <= min(32, restart["held_or_freed"]), (lost, restart)
    assert results["accounting"]["exact"] and "pmd" in results["accounting"]["pool_unchecked_because"], results
    assert chain["generated"] == chain["delivered"] + chain["dropped"]["total"] + chain["in_flight"]["total"], chain
    assert not results["warnings"], results["warnings"]
    assert [change["scheduler"] for change in results["changes"]] == ["hybrid"]
