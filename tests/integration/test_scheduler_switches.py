"""Every scheduler the data plane has, asked for live on a running service one after another, forwards and back:
each request is applied, or refused with an error naming what stands in its way; the service never ends on one,
and its accounting is exact when it is stopped. (A live switch to auto once aborted the manager: auto read its
options from the running deployment, whose scheduler was another.)"""

from __future__ import annotations

import json

from conftest import requires_cpu_cgroup, requires_root
from controlplane.spec import catalog
from integration.test_runs import assert_accounted
from integration.test_service import SPEC, answered, ctl, results_when_stopped, serving

pytestmark = requires_root

READY_FOR = "unis,auto"  # what these two need (cycle costs, switch costs) prepared; the others' needs are not


def test_every_scheduler_asked_for_live_is_applied_or_refused_and_the_service_lives_on(
    write_spec, tmp_path, machine_before
):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    names = catalog.scheduler_names()
    answers = []
    with serving(write_spec(SPEC), socket, out, "--ready-for", READY_FOR) as process:
        for name in [*names, *reversed(names)]:
            switched = ctl(socket, "scheduler", name)
            assert process.poll() is None, (name, process.communicate(timeout=60))
            if switched.returncode == 0:
                answer = answered(socket, json.loads(switched.stdout))
                assert answer["state"] == "applied", (name, answer)
                answers.append((name, "applied"))
            else:
                assert switched.returncode == 2 and "PUT /scheduler" in switched.stderr, (name, switched.stderr)
                answers.append((name, switched.stderr.strip()))
            status = ctl(socket, "status", "--json")
            assert status.returncode == 0, (name, status.stderr)
            running = json.loads(status.stdout)["scheduler"]
            assert running == name or answers[-1][1] != "applied", (name, running)
        results = results_when_stopped(socket, process, out)
    assert_accounted(results)
    applied = {name for name, outcome in answers if outcome == "applied"}
    # The service's NFs are Tandem NFs on one core: every policy over processes, threads or one process takes them;
    # those whose machine needs were not prepared (a real-time policy, cgroups) are refused saying so.
    assert {"auto", "bubble", "coop", "rtc", "unis"} <= applied, answers
    for name, outcome in answers:  # a refusal names the field and says why
        assert outcome == "applied" or "refused PUT /scheduler (body" in outcome, (name, outcome)
    # auto's own switches aside (it re-decides under traffic), the run's changes are the requests applied.
    asked = [c for c in results["changes"] if c["op"] == "set_scheduler" and c.get("by") != "auto"]
    assert sum(change["state"] == "applied" for change in asked) == sum(o == "applied" for _, o in answers), asked


# nfvnice by default needs its cpu cgroup; with its black-box cost (the NFs' measured costs) it needs those costs too.
@requires_cpu_cgroup
def test_a_switch_whose_options_need_more_is_applied_where_the_service_was_made_ready_with_them(
    write_spec, tmp_path, machine_before
):
    spec = write_spec(SPEC)
    for index, (ready, applies) in enumerate((("nfvnice", False), ("nfvnice:cost=blackbox", True))):
        socket, out = tmp_path / f"control{index}" / "tandem.sock", tmp_path / f"results{index}.json"
        with serving(spec, socket, out, "--ready-for", ready) as process:
            switched = ctl(socket, "scheduler", "nfvnice", "--option", "cost=blackbox")
            if applies:
                assert switched.returncode == 0, switched.stderr
                assert answered(socket, json.loads(switched.stdout))["state"] == "applied"
                assert json.loads(ctl(socket, "status").stdout)["scheduler"] == "nfvnice"
            else:  # what is missing, and the flag that prepares it, with the switch's options
                assert switched.returncode == 2, switched.stderr
                assert "nfvnice needs cycle_costs (true), which this run did not prepare" in switched.stderr
                assert "serve with --ready-for nfvnice:cost=blackbox" in switched.stderr
            results = results_when_stopped(socket, process, out)
        assert_accounted(results)
