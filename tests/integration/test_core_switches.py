"""One core's scheduler module switched while a service's traffic flows (`ctl scheduler NAME --core N`): the other
cores keep theirs and the service runs per_core, or one module again once every core runs the same; nothing lost. A
core that holds none of the NFs is refused naming the field. Cores with different modules need two NF cores (a VM of
four CPUs runs that test: bench/many_core_host.py); the rest runs on any machine."""

from __future__ import annotations

import json
import time

from conftest import requires_nf_cores, requires_root
from integration.test_nf_moves import TWO_CORES
from integration.test_runs import assert_accounted
from integration.test_service import SPEC, STATUS_PERIOD, answered, ctl, results_when_stopped, serving

pytestmark = requires_root

PER_CORE = SPEC.replace("scheduler: coop", "scheduler: {name: per_core, options: {cores: [{core: 1, name: coop}]}}")


def status(socket) -> dict:
    said = ctl(socket, "status")
    assert said.returncode == 0, said.stderr
    return json.loads(said.stdout)


def switched(socket, *words: str) -> dict:
    answer = ctl(socket, "scheduler", *words)
    assert answer.returncode == 0, (words, answer.stderr)
    change = answered(socket, json.loads(answer.stdout))
    assert change["state"] == "applied" and change["ring_drops_during"] == 0, json.dumps(change)
    return change


def test_a_cores_switch_on_a_service_of_one_nf_core(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(PER_CORE), socket, out) as process:
        now = status(socket)
        assert (now["scheduler"], now["scheduler_by_core"]) == ("per_core", {"1": "coop"}), now
        said = ctl(socket, "scheduler", "rtc", "--core", "0")
        assert said.returncode == 2 and "(body.core)" in said.stderr, said.stderr
        assert "must be one of the service's NF cores (1)" in said.stderr, said.stderr
        # Core 1 is every NF core: rtc runs them all, laid out in its process for the core.
        change = switched(socket, "rtc", "--core", "1")
        assert (change["scheduler"], change["core"], change["relayout"]) == ("rtc", 1, True), change
        assert [worker["name"] for worker in change["workers"]] == ["rtc@core1"], change
        now = status(socket)
        assert (now["scheduler"], now["scheduler_by_core"]) == ("rtc", {}), now
        time.sleep(STATUS_PERIOD)
        assert all(nf["packets_in"] > 0 for nf in status(socket)["nfs"])
        results = results_when_stopped(socket, process, out)
    assert_accounted(results)
    switches = [change for change in results["changes"] if change["op"] == "set_scheduler"]
    assert [change["state"] for change in switches] == ["refused", "applied"], switches
    assert switches[0]["errors"][0]["path"] == "scheduler.core"


@requires_nf_cores(3)
def test_cores_run_different_modules_and_each_switches_alone(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    # NFVnice for the switches: its processes sleep while their inputs are empty, as rtc's do here (idle: sleep). In
    # the VM that runs this test, coop's polling processes starved the virtual CPUs where the others start.
    with serving(write_spec(TWO_CORES), socket, out, "--ready-for", "nfvnice") as process:
        # Core 1 to NFVnice: fw and count, one rtc process there, each in a process of their own; core 2 runs rtc.
        check_pid = {nf["name"]: nf["pid"] for nf in status(socket)["nfs"]}["check"]
        change = switched(socket, "nfvnice", "--core", "1")
        assert (change["scheduler"], change["core"], change["relayout"]) == ("per_core", 1, True), change
        assert {worker["name"]: worker["nfs"] for worker in change["workers"]} == {
            "fw": "fw",
            "count": "count",
            "rtc@core2": "check",
        }, change
        now = status(socket)
        assert now["scheduler_by_core"] == {"1": "nfvnice", "2": "rtc"}, now
        assert {nf["name"]: nf["core"] for nf in now["nfs"]} == {"fw": 1, "count": 1, "check": 2}
        pids = {nf["name"]: nf["pid"] for nf in now["nfs"]}
        assert pids["check"] != check_pid  # a re-layout starts all anew
        # Other options for NFVnice on core 1: the same processes, the modules swapped in place.
        change = switched(socket, "nfvnice", "--core", "1", "--option", "period_us=2000")
        assert (change["scheduler"], change.get("relayout")) == ("per_core", None), change
        assert change["switch_us"] > 0
        # Core 2 to the same: one module for both again, in place: rtc's process of one NF is NFVnice's for it, and
        # the run keeps its processes in their order, though NFVnice numbers them in the NFs' (fw, check, count).
        change = switched(socket, "nfvnice", "--core", "2", "--option", "period_us=2000")
        assert (change["scheduler"], change["core"], change.get("relayout")) == ("nfvnice", 2, None), change
        assert change["switch_us"] > 0
        now = status(socket)
        assert now["scheduler_by_core"] == {} and {nf["name"]: nf["pid"] for nf in now["nfs"]} == pids, now
        time.sleep(STATUS_PERIOD)
        assert all(nf["packets_in"] > 0 for nf in status(socket)["nfs"])
        results = results_when_stopped(socket, process, out)
    assert_accounted(results)
    assert results["accounting"]["in_flight"] == 0
    switches = [change for change in results["changes"] if change["op"] == "set_scheduler"]
    assert [change["state"] for change in switches] == ["applied"] * 3, switches
    assert sum(change["ring_drops_during"] for change in switches) == 0
