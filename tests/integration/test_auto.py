"""`auto` on real chains: the policy its model picks for each kind of run, with exact accounting; a live switch when
the measured load moves; an idle chain whose NF core sleeps."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import KERNEL_SPEC, REPO, requires_cpu_cgroup, requires_nf_cores, requires_root, tandem
from integration.test_relayout import TESTPMD_CHAINS
from integration.test_runs import assert_accounted, run_results
from integration.test_service import SPEC as SERVICE_SPEC
from integration.test_service import answered, ctl, results_when_stopped, serving

pytestmark = requires_root


def run_auto(spec, tmp_path, *extra: str) -> dict:
    out = tmp_path / "results.json"
    result = tandem("run", str(spec), "--scheduler", "auto", "--json", str(out), "--quiet", *extra, timeout=240)
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert results["scheduler"]["name"] == "auto"
    assert_accounted(results)
    return results


def start_decision(results: dict) -> dict:
    report = results["scheduler"]["report"]
    start = report["decisions"][0]
    assert start["measured"] is False and start["t_s"] == 0
    assert start["policy"] == report["policy"] or report["policy_switches"] > 0
    return start


def prediction(decision: dict, policy: str) -> dict:
    return next(p for p in decision["predictions"] if p["policy"] == policy)


def first_switch_after_the_rise(results: dict, start: str) -> dict:
    """The first live switch of a stepped run (a trickle for 1.5 s, then a rate no core holds) that auto started on
    `start`: away from it, after the load rose."""
    report = results["scheduler"]["report"]
    assert report["decisions"][0]["policy"] == start, report["decisions"][0]["reason"]
    switches = [d for d in report["decisions"] if d.get("applied")]
    assert switches, report["decisions"]
    first = switches[0]
    assert first["from"] == start and first["policy"] != start, first
    assert first["t_s"] > 1.0, "not before the load rose (the first step lasts 1.5 s)"
    assert report["policy_switches"] == len(switches)
    return first


# The switches auto's model charges: this machine's, measured once (tandem-primitives --switch-costs) and cached,
# where the spec leaves them unset; the spec's own where it gives one. The data plane's model ran with exactly those.
SWITCH_COSTS = """\
name: switches
duration: 1
warmup: 0.2
traffic: {rate: 20 kpps, size: 64, flows: 16}
scheduler: {name: auto, options: {objective: latency, yield_ns: 999}}
chains:
  - name: c
    nfs:
      - {name: a, type: cost, core: 1, cost_cycles: 500, args: {cycles: 500}}
      - {name: b, type: cost, core: 1, cost_cycles: 500, args: {cycles: 500}}
"""


def test_auto_charges_this_machines_switches_and_the_specs_own(write_spec, tmp_path, monkeypatch, machine_before):
    monkeypatch.setenv("TANDEM_CACHE_DIR", str(tmp_path / "cache"))
    results = run_auto(write_spec(SWITCH_COSTS), tmp_path)
    sources = results["switch_costs"]
    assert sources["yield_ns"] == {"ns": 999, "source": "spec"}
    measured = {option: source for option, source in sources.items() if option != "yield_ns"}
    assert {source["source"] for source in measured.values()} <= {"measured", "default"}, sources
    # A user-level switch stays in user space; a hand-off between processes is a system call and a context switch:
    # on any machine the first is the cheaper (the wake-up is two hand-offs).
    if "ns" in measured["thread_switch_ns"] and "ns" in measured["wakeup_ns"]:
        assert 0 < measured["thread_switch_ns"]["ns"] < measured["wakeup_ns"]["ns"] / 2, sources
    charged = results["scheduler"]["report"]["switch_costs"]
    for option, source in sources.items():
        if "ns" in source:
            assert charged[option] == pytest.approx(source["ns"]), (option, charged, sources)
    assert (tmp_path / "cache" / "switch-costs.json").exists()


# A service made ready for auto measures this machine's switches before its traffic starts; switched to auto live,
# it charges those from the cache, never measuring while its NFs run (the measurement spins on their core). (The
# switch once aborted the manager: auto read its options from the running deployment, whose scheduler was coop.)
def test_a_service_switched_to_auto_live_charges_the_switches_measured_before_its_traffic(
    write_spec, tmp_path, monkeypatch, machine_before
):
    monkeypatch.setenv("TANDEM_CACHE_DIR", str(tmp_path / "cache"))
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SERVICE_SPEC), socket, out, "--ready-for", "auto") as process:
        cached = json.loads((tmp_path / "cache" / "switch-costs.json").read_text())
        switched = ctl(socket, "scheduler", "auto")
        assert switched.returncode == 0, switched.stderr
        assert answered(socket, json.loads(switched.stdout))["state"] == "applied"
        results = results_when_stopped(socket, process, out)
    assert_accounted(results)
    assert results["scheduler"]["name"] == "auto"
    [entry] = cached["by_cores"].values()
    charged = results["scheduler"]["report"]["switch_costs"]
    for option, name in (("yield_ns", "yield_handoff"), ("thread_switch_ns", "user_level_switch")):
        assert charged[option] == pytest.approx(entry[name]["median_ns"], abs=0.1), (option, charged, entry)


# Tandem NFs only, each line on one core: no switch between them, so run-to-completion, the model's ceiling.
@pytest.mark.parametrize("example", ["three-firewalls", "light-chain", "heterogeneous"])
def test_native_examples_run_to_completion(example, tmp_path, machine_before):
    results = run_auto(REPO / "examples" / f"{example}.yaml", tmp_path, "--duration", "1")
    start = start_decision(results)
    assert start["policy"] == "rtc", start["reason"]
    # No policy that switches between NF processes or threads is predicted more (where the core holds every offer,
    # several carry it all, and the simplest wins the tie).
    for other in ("bubble", "coop", "unis", "nfvnice", "cfs"):
        assert prediction(start, other)["throughput_pps"] <= prediction(start, "rtc")["throughput_pps"], other
    # The chosen policy's own report follows auto's: rtc's one process for the core, real-time, so that no other task
    # woken on the core preempts it.
    assert results["scheduler"]["report"]["policy_report"]["policy"] == "fifo"
    assert all(chain["delivered"] > 0 for chain in results["chains"])


# An unmodified application beside Tandem's NFs: only the policies that switch processes from outside can run it, and
# hybrid switches fewer of them (the native NFs of the core in one worker) than unis.
@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="dpdk-testpmd (Debian package dpdk) is missing")
@pytest.mark.parametrize("example", ["testpmd-chain", "native-and-testpmd"])
def test_unmodified_applications_beside_native_nfs_go_to_hybrid(example, tmp_path, machine_before):
    results = run_auto(REPO / "examples" / f"{example}.yaml", tmp_path, "--duration", "1")
    start = start_decision(results)
    assert start["policy"] == "hybrid", start["reason"]
    assert "external" in start["reason"]
    assert not prediction(start, "rtc")["feasible"] and not prediction(start, "bubble")["feasible"]
    assert prediction(start, "hybrid")["throughput_pps"] > prediction(start, "unis")["throughput_pps"]
    workers = [w["name"] for w in results["workers"]]
    assert "native@core1" in workers and len(workers) == len(results["nfs"]) - (
        2 if example == "native-and-testpmd" else 1
    )
    assert results["chains"][0]["delivered"] > 0


def test_kernel_io_nfs_go_to_scc(write_spec, tmp_path, machine_before):
    results = run_auto(write_spec(KERNEL_SPEC), tmp_path)
    assert start_decision(results)["policy"] == "scc"
    assert results["chains"][0]["delivered"] > 0


# Eight NFs offered a trickle: with the objective efficiency the model picks rtc whose worker sleeps while its inputs
# are empty, and the NF core is idle most of the time. Polling would keep it 100 % busy whatever the rate; at 2 kpps
# one wake-up a packet takes well under a per cent of a core here, so half leaves room for a much slower host.
IDLE_CHAIN = """\
name: idle
duration: 2
warmup: 0.5
traffic: {rate: 2 kpps, size: 64, flows: 16}
scheduler: {name: auto, options: {objective: efficiency}}
chains:
  - name: c
    nfs:
"""


def test_an_idle_chain_under_efficiency_leaves_its_core_idle(write_spec, tmp_path, machine_before):
    spec = IDLE_CHAIN + "".join(f"      - {{name: n{i}, type: cost, core: 1, args: {{ns: 100}}}}\n" for i in range(8))
    results = run_auto(write_spec(spec), tmp_path)
    start = start_decision(results)
    assert start["policy"] == "rtc-sleep", start["reason"]
    assert prediction(start, "rtc-sleep")["cpu_share"] < 0.05
    policy_report = results["scheduler"]["report"]["policy_report"]
    assert policy_report["idle"] == "sleep" and policy_report["wakeups"] > 0
    [worker] = results["workers"]  # rtc's one process for the core
    assert worker["os"]["cpu_share"] < 0.5, worker["os"]
    chain = results["chains"][0]
    assert chain["delivered"] == chain["generated"] - chain["in_flight"]["total"]  # a trickle: nothing dropped


# testpmd on core 1 leaves only the policies that schedule processes from outside for the whole run; core 2's
# Tandem NFs, at a light load, can sleep between packets (rtc-sleep): for efficiency each core gets its own policy.
TWO_CORE_AUTO = (
    IDLE_CHAIN.replace("name: idle", "name: per-core")
    .replace("2 kpps", "20 kpps")
    .removesuffix("  - name: c\n    nfs:\n")
    + """\
  - name: app
    nfs:
      - {name: fw, type: firewall, core: 1, cost_cycles: 300, args: {synthetic_rules: 10}}
      - {name: pmd, type: external, core: 1, cost_cycles: 300, args: {forward_mode: io}}
  - name: web
    nfs:
      - {name: ttl, type: ttl, core: 2, cost_cycles: 300}
      - {name: swap, type: macswap, core: 2, cost_cycles: 300}
      - {name: check, type: checkip, core: 2, cost_cycles: 300}
"""
)


@requires_nf_cores(2)
@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="dpdk-testpmd (Debian package dpdk) is missing")
def test_auto_gives_each_core_its_own_policy_where_they_differ(write_spec, tmp_path, machine_before):
    results = run_auto(write_spec(TWO_CORE_AUTO), tmp_path)
    start = start_decision(results)
    report = results["scheduler"]["report"]
    assert start["policy"] == report["policy"] == "per_core", start["reason"]
    assert start["core_policies"] == report["core_policies"], report
    assert start["core_policies"]["2"] == "rtc-sleep", start["reason"]
    assert start["core_policies"]["1"] in ("unis", "hybrid", "cfs"), start["reason"]
    mix = prediction(start, "per_core")
    assert all(
        mix["packets_per_cpu_second"] > p["packets_per_cpu_second"]
        for p in start["predictions"]
        if p is not mix and p["feasible"]
    )
    # per_core ran each core's module: core 2's one process sleeping between packets (rtc, idle: sleep).
    cores = {core["core"]: core for core in report["policy_report"]["cores"]}
    assert cores[2]["scheduler"] == "rtc" and cores[2]["options"]["idle"] == "sleep", cores
    assert all(chain["delivered"] > 0 for chain in results["chains"])


# The same two chains for latency, their costs given (the model's input) and large, so that the load that moves the
# choice is one an emulated CPU generates too: at a trickle one policy serves both cores best (hybrid: testpmd's
# process against the native NFs' worker); once core 2's line is loaded, rtc there, beside a policy that schedules
# testpmd's process on core 1, is predicted better, and auto switches to that mix live: in place from hybrid, whose
# processes are the mix's (testpmd's, core 1's one native NF's, core 2's native NFs' in one: rtc's process for the
# core), else by re-laying the NFs out.
STEPPED_TWO_CORES = (
    TWO_CORE_AUTO.replace("duration: 2", "duration: 8")
    .replace("traffic: {rate: 20 kpps,", "traffic: {rate_steps: [500 pps, 50 kpps], step_seconds: 4,")
    .replace("objective: efficiency}", "objective: latency, redecide_ms: 100}")
    .replace("cost_cycles: 300", "cost_cycles: 100000")
)


@requires_nf_cores(2)
@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="dpdk-testpmd (Debian package dpdk) is missing")
def test_auto_switches_live_to_a_policy_per_core_when_the_load_moves(write_spec, tmp_path, machine_before):
    assert STEPPED_TWO_CORES.count("100000") == 5 and "rate_steps" in STEPPED_TWO_CORES, STEPPED_TWO_CORES
    results = run_auto(write_spec(STEPPED_TWO_CORES), tmp_path)
    start = start_decision(results)
    report = results["scheduler"]["report"]
    assert start["policy"] != "per_core", start["reason"]
    applied = [d for d in report["decisions"][1:] if d.get("applied")]
    said = [
        (d["t_s"], d["from"], d["policy"], d.get("core_policies"), d["offered_pps"], d.get("relayout")) for d in applied
    ]
    assert applied, report["decisions"]
    switch = applied[0]
    # The steps repeat (the trickle again in the window's last half second) and the drain offers nothing: auto may
    # switch again for that, never while the load is up.
    assert all(d["offered_pps"][1] < 5000 for d in applied[1:]), said
    in_place = start["policy"] == "hybrid"  # unis's or cfs's process per NF on core 2 is not rtc's one for it
    assert switch["from"] == start["policy"] and bool(switch.get("relayout")) != in_place, said
    assert switch["policy"] == "per_core" and switch["core_policies"]["2"] == "rtc", switch
    assert switch["offered_pps"][1] > 5000, switch  # measured on the second step
    if len(applied) == 1:  # per_core to the end: core 2's module was rtc
        assert report["policy"] == "per_core" and report["core_policies"] == switch["core_policies"], report
        cores = {core["core"]: core for core in report["policy_report"]["cores"]}
        assert cores[2]["scheduler"] == "rtc", cores
    relayouts = [change for change in results["changes"] if change.get("relayout")]
    if in_place:  # the same processes from the start to the end: the modules swapped between two turns
        assert switch["switch_us"] > 0 and not relayouts, (switch, relayouts)
        assert {worker["name"] for worker in results["workers"]} == {"native@core1", "native@core2", "pmd"}
        return
    (change,) = relayouts[:1]
    assert change["state"] == "applied" and change["by"] == "auto", change
    # testpmd's one process from the start to the end: the NFs were re-laid out around it.
    pmd = next(worker for worker in results["workers"] if worker["nfs"] == "pmd")
    assert next(worker["pid"] for worker in change["workers"] if worker["name"] == "pmd") == pmd["pid"]


# A trickle, then a rate no core holds, auto choosing among the policies of one process per NF (as where unmodified
# processes leave no other layout): it starts with the one whose NFs sleep, measures the load rise, and switches live,
# after its confirmations, to the policy the model then predicts better; the accounting stays exact.
STEPPED = """\
name: stepped
duration: 3
warmup: 0.3
ring_capacity: 4096
traffic: {rate_steps: [20 kpps, 50 Mpps], step_seconds: 1.5, size: 64, flows: 16}
scheduler: {name: auto, options: {objective: efficiency, redecide_ms: 100, candidates: "coop,unis,nfvnice,cfs"}}
chains:
  - name: c
    nfs:
      - {name: a, type: cost, core: 1, args: {ns: 100}}
      - {name: b, type: cost, core: 1, args: {ns: 100}}
      - {name: z, type: cost, core: 1, args: {ns: 100}}
"""


@requires_cpu_cgroup
def test_auto_switches_live_when_the_load_rises(write_spec, tmp_path, machine_before):
    results = run_auto(write_spec(STEPPED), tmp_path)
    first = first_switch_after_the_rise(results, "nfvnice")
    assert max(first["offered_pps"]) > 1e6
    assert results["chains"][0]["delivered"] > 0


# The same steps through Tandem NFs alone, auto choosing between nfvnice (a process per NF, asleep while idle: the
# efficient one at a trickle) and rtc (the core's NFs in one process: the efficient one under load): when the load
# rises it asks the run to re-lay the NFs out for rtc, which starts rtc's process beside nfvnice's (auto tells its
# workers before the drain: Scheduler::planned_relayout), holds the entries, drains the NFs and hands the same rings
# over to it, losing nothing to the switch.
RELAYOUT = STEPPED.replace('candidates: "coop,unis,nfvnice,cfs"', 'candidates: "nfvnice,rtc"')


@requires_cpu_cgroup
def test_auto_relays_the_nfs_out_when_another_layout_is_predicted_better(write_spec, tmp_path, machine_before):
    results = run_auto(write_spec(RELAYOUT), tmp_path)
    report = results["scheduler"]["report"]
    assert {report["policy"], *report["relayable_to"]} == {"nfvnice", "rtc"}, report  # each the other's way out
    first = first_switch_after_the_rise(results, "nfvnice")
    assert first["policy"] == "rtc" and first["relayout"], first
    (change,) = [change for change in results["changes"] if change.get("relayout")][:1]
    assert change["state"] == "applied" and change["by"] == "auto", change
    assert [worker["name"] for worker in change["workers"]] == ["rtc@core1"], change["workers"]
    assert change["held_ms"] >= change["drain_ms"] > 0, change
    assert change["staged_ms"] > 0 and change["workers"][0]["staged"], change
    if report["policy"] == "rtc":  # no switch back since: rtc's one process ran the NFs to the end
        assert [worker["name"] for worker in results["workers"]] == ["rtc@core1"], results["workers"]


# The same steps through three Tandem NFs and testpmd on one core, auto choosing between unis (a process per NF:
# at a trickle both deliver it all, and the simpler policy wins the tie) and hybrid (the native NFs in one worker
# switched against testpmd: more under load). When the load rises the run re-lays the native NFs out around the
# running testpmd, whose process goes on through the switch.
WITH_TESTPMD = (
    STEPPED.split("chains:")[0].replace(
        'objective: efficiency, redecide_ms: 100, candidates: "coop,unis,nfvnice,cfs"',
        'objective: throughput, redecide_ms: 100, candidates: "unis,hybrid"',
    )
    + TESTPMD_CHAINS
)


@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="dpdk-testpmd (Debian package dpdk) is missing")
def test_auto_relays_native_nfs_out_around_a_running_testpmd(write_spec, tmp_path, machine_before):
    results = run_auto(write_spec(WITH_TESTPMD), tmp_path)
    first = first_switch_after_the_rise(results, "unis")
    assert first["policy"] == "hybrid" and first["relayout"], first
    (change,) = [change for change in results["changes"] if change.get("relayout")][:1]
    assert change["state"] == "applied" and change["by"] == "auto", change
    assert [worker["name"] for worker in change["workers"]] == ["native@core1", "pmd"], change["workers"]
    # testpmd's one process from the start to the end: started once, never replaced.
    pmd = next(worker for worker in results["workers"] if worker["nfs"] == "pmd")
    assert next(worker["pid"] for worker in change["workers"] if worker["name"] == "pmd") == pmd["pid"]
    assert pmd["exit"] == "exited with status 0", pmd
