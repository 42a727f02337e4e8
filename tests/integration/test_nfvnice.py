"""NFVnice on real NFs: fairness against CFS, entry backpressure with exact accounting, cgroups removed on every exit
path."""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import time
from pathlib import Path

from conftest import BASE_SPEC, CPU_CGROUP, requires_cpu_cgroup, requires_root, tandem
from integration.test_runs import assert_accounted, run_results, start_run
from integration.test_service import SPEC as SERVICE_SPEC
from integration.test_service import answered, ctl, results_when_stopped, serving

# On whichever hierarchy offers cpu: v1 on our hybrid VMs, v2 on v2-only hosts (Debian 12, Ubuntu 22.04+, RHEL 9).
pytestmark = [requires_root, requires_cpu_cgroup]

# The paper's Tables 1-2 scenario, heterogeneous costs with uneven load (the third NF gets half), overloading core 1.
# Costs in time keep the paper's 10:5:1 ratio and make the demand 1.55 cores of NF work on any host (in TSC cycles
# it would be 1.0-2.0 cores depending on the host's TSC rate, and no overload at all on a fast one). Microsecond costs
# at 2.5 Mpps in all: at 12.5 Mpps and 200/100/20 ns, a loaded CI host's generator offered anything from 2 to 5.7 Mpps
# per chain, not in the chains' 2:2:1, and the runtime's own ~20 ns a packet was the light NF's cost twice over;
# nfvnice's median fell to 0.945 there. Here the generator keeps its rates and the NFs' costs are what they measure.
UNEVEN_HETEROGENEOUS = """\
name: uneven
duration: 2
warmup: 0.5
ring_capacity: 16384
traffic: {size: 64, flows: 64}
scheduler: nfvnice
chains:
  - {name: heavy, traffic: {rate: 1 Mpps}, nfs: [{name: nf1000ns, type: cost, core: 1, args: {ns: 1000}}]}
  - {name: medium, traffic: {rate: 1 Mpps}, nfs: [{name: nf500ns, type: cost, core: 1, args: {ns: 500}}]}
  - {name: light, traffic: {rate: 0.5 Mpps}, nfs: [{name: nf100ns, type: cost, core: 1, args: {ns: 100}}]}
"""

# A chain whose last NF is the bottleneck, offered far more than it can take: 10 Mpps x 200 ns is 2 cores of work
# for z alone, on any host.
BOTTLENECK = """\
name: bottleneck
duration: 1
warmup: 0.3
traffic: {size: 64, flows: 64, rate: 10 Mpps}
scheduler: nfvnice
chains:
  - name: c
    nfs:
      - {name: a, type: cost, core: 1, args: {ns: 20}}
      - {name: b, type: cost, core: 1, args: {ns: 20}}
      - {name: z, type: cost, core: 1, args: {ns: 200}}
"""

# The bench's target for NFVnice's Jain index (bench/results/nfvnice-fairness.md: 0.998-1.000 in every case).
NFVNICE_FAIRNESS = 0.95

NFVNICE_BASE = BASE_SPEC.replace("scheduler: coop", "scheduler: nfvnice")


def jain(values: list[float]) -> float:
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def fairness(results: dict) -> float:
    """Jain's index over output / offered: 1 when every NF gets the same fraction of its demand."""
    return jain([c["window"]["delivered_mpps"] / c["window"]["offered_mpps"] for c in results["chains"]])


def test_nfvnice_keeps_its_fairness_promise_on_the_heterogeneous_scenario(write_spec, tmp_path, machine_before):
    spec = write_spec(UNEVEN_HETEROGENEOUS)
    # Median of 3 runs each: the host is noisy.
    index = {}
    for scheduler in ("cfs", "nfvnice"):
        runs = []
        for repeat in range(3):
            out = tmp_path / f"{scheduler}-{repeat}.json"
            result = tandem("run", str(spec), "--scheduler", scheduler, "--json", str(out), "--quiet")
            assert result.returncode == 0, result.stderr
            results = run_results(out)
            assert_accounted(results)
            runs.append(fairness(results))
        index[scheduler] = statistics.median(runs)
    # NFVnice's own promise, whatever the host: each NF gets the same fraction of its demand (0.999-1.000 here, 0.998 in
    # bench/). CFS splits the core evenly, which the overload makes unfair (0.72-0.84 here).
    assert index["nfvnice"] >= NFVNICE_FAIRNESS, index
    assert index["nfvnice"] > index["cfs"], index
    report = results["scheduler"]["report"]
    assert report["weight_updates"] > 500  # every 1 ms over 2.5 s
    shares = {name: nf["shares_mean"] for name, nf in report["nfs"].items()}
    assert shares["nf1000ns"] > shares["nf500ns"] > shares["nf100ns"], shares  # rate x cost, measured inside the NFs


# Issue 37's case: four chains of two NFs on core 1, equal offers, the cost in front or behind (the last chain's
# costly NF sits behind a cheap one). 1.5 Mpps x 840 ns is 1.26 cores of work on any host: overloaded, so the shares
# decide. Weighted by what reached each second NF (its upstream's throttled output), NFVnice kept CFS's first split
# (Jain 0.85-0.87 on the same shape in cycles); weighted by the chain's offer, every chain gets the same fraction.
TWO_NF_CHAINS = """\
name: two-nf-chains
duration: 2
warmup: 0.5
ring_capacity: 4096
traffic: {size: 64, flows: 64, rate: 1.5 Mpps}
scheduler: nfvnice
chains:
  - {name: a, nfs: [{name: a1, type: cost, core: 1, args: {ns: 20}}, {name: a2, type: cost, core: 1, args: {ns: 60}}]}
  - {name: b, nfs: [{name: b1, type: cost, core: 1, args: {ns: 40}}, {name: b2, type: cost, core: 1, args: {ns: 100}}]}
  - {name: c, nfs: [{name: c1, type: cost, core: 1, args: {ns: 100}}, {name: c2, type: cost, core: 1, args: {ns: 100}}]}
  - {name: d, nfs: [{name: d1, type: cost, core: 1, args: {ns: 20}}, {name: d2, type: cost, core: 1, args: {ns: 400}}]}
"""


def test_nfvnice_is_fair_to_chains_of_two_nfs_whatever_order_their_costs_are_in(write_spec, tmp_path, machine_before):
    spec = write_spec(TWO_NF_CHAINS)
    runs = []
    for repeat in range(3):
        out = tmp_path / f"r{repeat}.json"
        result = tandem("run", str(spec), "--json", str(out), "--quiet")
        assert result.returncode == 0, result.stderr
        results = run_results(out)
        assert_accounted(results)
        runs.append(fairness(results))
    assert statistics.median(runs) >= NFVNICE_FAIRNESS, runs
    report = results["scheduler"]["report"]["nfs"]
    # Each second NF's demand is its chain's offer, whatever its throttled upstream let through.
    for name in ("a2", "b2", "c2", "d2"):
        assert report[name]["demand_mpps"] >= report[name]["arrival_mpps"], report[name]


def run_accounted(spec_path, tmp_path) -> tuple[subprocess.CompletedProcess, dict]:
    """Runs a spec to completion; returns the CLI's result and the results, whose accounting is checked."""
    out = tmp_path / "r.json"
    result = tandem("run", str(spec_path), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert_accounted(results)
    return result, results


def test_backpressure_sheds_at_the_entry_with_exact_accounting(write_spec, tmp_path, machine_before):
    result, results = run_accounted(write_spec(BOTTLENECK), tmp_path)
    chain = results["chains"][0]
    # The chain is overloaded (z alone needs 2 cores), and backpressure moves its drops to the entry: all but a
    # batch or two of them (8.28 M of 8.28 M here), whatever the host, and next to no wasted work.
    assert chain["dropped"]["entry_backpressure"] >= 0.99 * chain["dropped"]["total"] > 0, chain["dropped"]
    assert chain["wasted_work"] < chain["dropped"]["entry_backpressure"] / 100, chain  # drops moved to the entry
    assert chain["delivered"] > 0
    assert results["scheduler"]["report"]["congestion_episodes"] > 0
    assert results["scheduler"]["report"]["cgroup"].startswith(CPU_CGROUP.version)  # the hierarchy the run used
    assert "entry-backpressure" in result.stdout


def test_without_backpressure_the_same_chain_wastes_work(write_spec, tmp_path, machine_before):
    spec = BOTTLENECK.replace("scheduler: nfvnice", "scheduler: {name: nfvnice, options: {backpressure: false}}")
    out = tmp_path / "r.json"
    result = tandem("run", str(write_spec(spec)), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    chain = run_results(out)["chains"][0]
    assert chain["dropped"]["entry_backpressure"] == 0
    # Wasted work is what was dropped after an NF had worked on it: at the rings past the entry, exactly. Without
    # backpressure the entry ring takes what a drains, so a share of the overload gets past it and is dropped inside
    # (0.36 of what was generated here, on any host the same race between a and z); a tenth at least.
    inside = sum(dropped for ring, dropped in chain["dropped"]["rings"].items() if not ring.endswith(":entry"))
    assert chain["wasted_work"] == inside, chain
    assert chain["wasted_work"] > 0.1 * chain["generated"], chain


def test_at_max_rate_a_closed_entry_offers_nothing_instead_of_shedding(write_spec, tmp_path, machine_before):
    # "As fast as the entry takes": while backpressure closes the entry it takes nothing. Shedding a burst per
    # generator loop instead counted ~1.7 G packets a second as offered and dropped.
    _, results = run_accounted(write_spec(BOTTLENECK.replace("rate: 10 Mpps", "rate: max")), tmp_path)
    chain = results["chains"][0]
    assert results["scheduler"]["report"]["congestion_episodes"] > 0  # the entry was closed at times
    assert chain["dropped"]["entry_backpressure"] == 0, chain["dropped"]
    assert chain["window"]["offered_mpps"] < 2 * chain["window"]["delivered_mpps"] + 1, chain["window"]


def _run_cgroup(process_pid: int) -> Path:
    root = CPU_CGROUP.root
    groups = [p for p in root.iterdir() if p.name.startswith("tandem")]
    assert len(groups) == 1, groups
    return groups[0]


def test_each_nf_runs_in_its_own_cpu_cgroup_and_ctrl_c_removes_them(write_spec, tmp_path, machine_before):
    out = tmp_path / "r.json"
    process, pids = start_run(write_spec(NFVNICE_BASE), out)
    time.sleep(1.5)
    run_group = _run_cgroup(process.pid)
    if CPU_CGROUP.version == "v2":  # cpu enabled for the run's group and, in it, for the NFs' (machine_before: undone)
        assert "cpu" in (CPU_CGROUP.root / "cgroup.subtree_control").read_text().split()
        assert "cpu" in (run_group / "cgroup.subtree_control").read_text().split()
    weight_file, least = ("cpu.shares", 2) if CPU_CGROUP.version == "v1" else ("cpu.weight", 1)
    for name, pid in pids.items():
        assert str(pid) in (run_group / name / "cgroup.procs").read_text().split(), name
        assert int((run_group / name / weight_file).read_text()) >= least
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == 130
    assert_accounted(run_results(out))


def test_killed_nf_under_nfvnice_is_named_and_cgroups_are_removed(write_spec, tmp_path, machine_before):
    out = tmp_path / "r.json"
    process, pids = start_run(write_spec(NFVNICE_BASE), out)
    time.sleep(1)
    subprocess.run(["kill", "-9", str(pids["b"])])
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 1, stderr
    assert "NF b (pid" in stderr and "killed by signal 9" in stderr


def _groups_hold(run_group: Path, pids: dict[str, int]) -> bool:
    """Whether each NF's process is in its own group of the run's (what the cgroup work queue made, in its time)."""
    return all(
        (run_group / name / "cgroup.procs").exists()
        and str(pid) in (run_group / name / "cgroup.procs").read_text().split()
        for name, pid in pids.items()
    )


def _within(seconds: float, condition) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_live_switches_away_and_back_move_the_nfs_out_of_their_groups_and_in_again(
    write_spec, tmp_path, machine_before
):
    # The groups are made, filled and removed on the manager's cgroup thread, the switch answered without waiting:
    # the old module's removals must come before the new one's creations of the same names, or the NFs would end up
    # in groups removed under them (or in none). 10 s is far beyond a move's grace period (tens of ms).
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SERVICE_SPEC), socket, out, "--ready-for", "nfvnice") as process:
        pids = {nf["name"]: nf["pid"] for nf in json.loads(ctl(socket, "status", "--json").stdout)["nfs"]}
        run_group = _run_cgroup(process.pid)
        for name in ("nfvnice", "coop", "nfvnice", "coop", "nfvnice"):
            switched = ctl(socket, "scheduler", name)
            assert switched.returncode == 0, switched.stderr
            assert answered(socket, json.loads(switched.stdout))["state"] == "applied", name
            if name == "nfvnice":
                assert _within(10, lambda: _groups_hold(run_group, pids)), (name, list(run_group.iterdir()))
            else:
                assert _within(10, lambda: not any(p.is_dir() for p in run_group.iterdir())), list(run_group.iterdir())
        results = results_when_stopped(socket, process, out)
    assert_accounted(results)
    assert not results["warnings"], results["warnings"]
    work = results["scheduler"]["report"]["cgroup_work"]
    assert work["changes"] >= 3 * 2 * len(pids), work  # each attach's group per NF and each release's
