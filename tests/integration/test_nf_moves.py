"""An NF moved to another core while a service's traffic flows (`ctl move`): the NFs re-laid out by a fresh module of
the running scheduler, the moved NF's process started again on its new core, nothing lost, a core none of the NFs
had reserved for them once one moves there; a move the service cannot make is refused naming the field, the NFs'
processes untouched. The moves need three NF cores (a VM of four CPUs runs them: bench/many_core_host.py); the
refusals run on any machine."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from conftest import requires_nf_cores, requires_root
from integration.test_runs import assert_accounted
from integration.test_service import SPEC, STATUS_PERIOD, answered, ctl, results_when_stopped, serving

pytestmark = requires_root

# fw and count on core 1, check on core 2 (the cores the service reserves at its start), under rtc (a process
# per core) whose processes sleep while their inputs are empty. 50 kpps. Both for the VM that runs this test
# (bench/many_core_host.py): its four virtual CPUs share two real ones, and processes polling on two of them would
# starve the one where a new process attaches (past the 10 s the manager gives it).
TWO_CORES = (
    SPEC.replace("200 kpps", "50 kpps")
    .replace("scheduler: coop", "scheduler: {name: rtc, options: {idle: sleep}}")
    .replace("{name: check, type: checkip, core: 1}", "{name: check, type: checkip, core: 2}")
) + "      - {name: count, type: counter, core: 1}\n"
# Each move and the processes it lays the NFs out in, by core.
MOVES = [
    ("count", 2, {"rtc@core1": "fw", "rtc@core2": "check,count"}),
    ("count", 1, {"rtc@core1": "fw,count", "rtc@core2": "check"}),
    ("fw", 2, {"rtc@core1": "count", "rtc@core2": "fw,check"}),
    ("count", 3, {"rtc@core2": "fw,check", "rtc@core3": "count"}),  # a core none had: reserved for the NFs then
]


def nfs(socket) -> dict:
    return {nf["name"]: nf for nf in json.loads(ctl(socket, "status").stdout)["nfs"]}


def allowed_cores(pid: int) -> str:
    """The CPUs a process may run on, as /proc says (Cpus_allowed_list)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return next(line.split(":")[1].strip() for line in status.splitlines() if line.startswith("Cpus_allowed_list"))


def refused(socket, *words: str) -> str:
    answer = ctl(socket, "move", *words)
    assert answer.returncode == 2, (words, answer.stdout, answer.stderr)
    return answer.stderr


def test_a_move_the_service_cannot_make_is_refused_naming_the_field(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SPEC), socket, out) as process:
        pids = {name: nf["pid"] for name, nf in nfs(socket).items()}
        said = refused(socket, "fw", "0")
        assert "(body.core)" in said and "core 0 is the control core" in said, said
        said = refused(socket, "fw", "4095")
        assert "(body.core)" in said and "core 4095 is not one this machine gives Tandem" in said, said
        said = refused(socket, "fw", "1")
        assert "(body.core)" in said and "NF 'fw' is on core 1 already" in said, said
        said = refused(socket, "nobody", "1")
        assert "(path)" in said and "no NF named 'nobody'" in said, said
        said = refused(socket, "fw", "-1")  # refused by the API's schema before the data plane sees it
        assert "(body.core)" in said, said
        time.sleep(STATUS_PERIOD)
        assert {name: nf["pid"] for name, nf in nfs(socket).items()} == pids  # nothing was re-laid out
        results = results_when_stopped(socket, process, out)
    assert_accounted(results)
    moves = [change for change in results["changes"] if change["op"] == "move_nf"]
    # The data plane's refusals (the control plane answered the cores the machine has not, the schema the -1).
    assert [change["state"] for change in moves] == ["refused"] * 2, moves
    # Each names the NF it was about and when it was answered, as an applied change does.
    assert "nobody" in [change.get("nf") for change in moves] and all(change["t_done"] > 0 for change in moves), moves


@requires_nf_cores(3)
def test_an_nf_moved_to_another_core_under_traffic_loses_nothing(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(TWO_CORES), socket, out) as process:
        # The service's NF cores are its NFs' alone: this process was moved off them, not off core 3.
        assert not {1, 2} & os.sched_getaffinity(0) and 3 in os.sched_getaffinity(0)
        for nf, core, workers in MOVES:
            before = nfs(socket)
            moved = ctl(socket, "move", nf, str(core))
            assert moved.returncode == 0, moved.stderr
            change = answered(socket, json.loads(moved.stdout))
            assert change["state"] == "applied" and change["relayout"], change
            assert (change["nf"], change["core"], change["core_before"]) == (nf, core, before[nf]["core"]), change
            assert {worker["name"]: worker["nfs"] for worker in change["workers"]} == workers, change
            assert change["ring_drops_during"] == 0, json.dumps(change)  # whole: pytest elides a dict
            now = nfs(socket)
            assert now[nf]["core"] == core and now[nf]["pid"] != before[nf]["pid"]
            assert allowed_cores(now[nf]["pid"]) == str(core)  # its process runs on its new core alone
            time.sleep(STATUS_PERIOD)
            assert nfs(socket)[nf]["packets_in"] > now[nf]["packets_in"]  # and it forwards there
        assert 3 not in os.sched_getaffinity(0)  # core 3 is the NFs' now too
        results = results_when_stopped(socket, process, out)
    assert_accounted(results)
    assert results["accounting"]["in_flight"] == 0
    moves = [change for change in results["changes"] if change["op"] == "move_nf"]
    assert [change["state"] for change in moves] == ["applied"] * len(MOVES), moves
    assert sum(change["ring_drops_during"] for change in moves) == 0
    assert {nf["name"]: nf["core"] for nf in results["nfs"]} == {"fw": 2, "check": 2, "count": 3}
