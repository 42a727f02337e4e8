"""Unmodified DPDK applications (Debian's dpdk-testpmd) as links of a chain: exact accounting, scheduling by unis,
and no process or real-time thread left behind on any exit path."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import requires_root, tandem
from integration.test_runs import assert_accounted, run_results, start_run

pytestmark = [
    requires_root,
    pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="dpdk-testpmd (Debian package dpdk) is missing"),
]

# Tandem NFs around two testpmd instances, one passing packets on (io), one swapping their MAC addresses.
MIXED_SPEC = """\
name: mixed
duration: 1
warmup: 0.3
ring_capacity: CAPACITY
traffic: {rate: RATE, size: 64, flows: 16}
scheduler: SCHEDULER
chains:
  - name: c
    nfs:
      - {name: fw, type: firewall, core: 1, cost_cycles: 60, args: {synthetic_rules: 10}}
      - {name: pmd1, type: external, core: 1, cost_cycles: 30, args: {forward_mode: io}}
      - {name: pmd2, type: external, core: 1, cost_cycles: 30, args: {forward_mode: macswap}}
      - {name: ttl, type: ttl, core: 1, cost_cycles: 30}
"""


def mixed_spec(scheduler: str = "unis", rate: str = "1000000", capacity: int = 2048) -> str:
    return MIXED_SPEC.replace("SCHEDULER", scheduler).replace("RATE", rate).replace("CAPACITY", str(capacity))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TANDEM_CACHE_DIR", str(tmp_path / "cache"))


def dpdk_control_threads(nf_pids: dict) -> dict:
    """Where the DPDK control threads (interrupts, multi-process IPC) of the run's processes may run, per process (the
    manager, the workers, testpmd): the CPUs of each in /proc/PID/task/TID/status. A thread that ends while we look is
    passed by."""
    first = Path(f"/proc/{next(iter(nf_pids.values()))}/stat").read_text()
    manager = int(first.rsplit(")", 1)[1].split()[1])
    allowed = {}
    for name, pid in [("manager", manager), *nf_pids.items()]:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                if (task / "comm").read_text().strip() not in ("eal-intr-thread", "rte_mp_handle"):
                    continue
                status = (task / "status").read_text()
            except FileNotFoundError:
                continue
            cpus = next(line.split()[1] for line in status.splitlines() if line.startswith("Cpus_allowed_list:"))
            allowed.setdefault(name, set()).add(cpus)
    return allowed


def test_unis_schedules_testpmd_between_tandem_nfs(write_spec, tmp_path, machine_before):
    out = tmp_path / "r.json"
    result = tandem("run", str(write_spec(mixed_spec())), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert_accounted(results)  # also: the hops of fw and ttl in order around the unmodified NFs
    chain = results["chains"][0]
    # 1 Mpps offered to a chain of ~150 cycles a packet (a tenth of a core on a host twice as slow as this one): all of
    # what the generator offered arrives. A testpmd scheduled before it forwards lost ~0.65 of it here.
    assert chain["window"]["delivered_mpps"] > 0.9 * chain["window"]["offered_mpps"], chain["window"]
    report = results["scheduler"]["report"]
    assert report["wait_queues"] == {"1": ["fw", "pmd1", "pmd2", "ttl"]}
    assert report["nfs"]["pmd1"]["switched_in"] > 10 and report["nfs"]["pmd2"]["switched_in"] > 10
    nfs = {nf["name"]: nf for nf in results["nfs"]}
    rings = {ring["name"]: ring for ring in results["rings"]}
    for name, mode, out_ring in (("pmd1", "io", "c:pmd1->pmd2"), ("pmd2", "macswap", "c:pmd2->ttl")):
        assert nfs[name]["report"]["application"] == "testpmd" and nfs[name]["report"]["forward_mode"] == mode
        assert nfs[name]["report"]["forwarding_thread"] > 0
        # What it received and did not send, it freed at a full next ring: that ring's drops (testpmd's own count
        # must agree, else a warning). A fast NF can overrun θmax while UNiS switches it out, but only rarely.
        assert 0 < nfs[name]["packets_out"] and rings[out_ring]["dropped_full"] < 0.01 * nfs[name]["packets_in"], rings[
            out_ring
        ]
        assert nfs[name]["window"]["busy_share"] is None  # not visible from outside: unknown, not zero
    assert [w["exit"] for w in results["workers"]] == ["exited with status 0"] * 4
    assert not results["warnings"], results["warnings"]


def test_hybrid_runs_the_native_nfs_in_one_worker_switched_against_testpmd(write_spec, tmp_path, machine_before):
    # fw -> count -> ttl -> testpmd: the three native NFs are consecutive calls in one worker, which UNiS switches
    # against testpmd by the occupancy of the one ring between them.
    spec = (
        mixed_spec("hybrid")
        .replace(
            "name: pmd1, type: external, core: 1, cost_cycles: 30, args: {forward_mode: io}",
            "name: count, type: counter, core: 1, cost_cycles: 30",
        )
        .replace(
            "      - {name: pmd2, type: external, core: 1, cost_cycles: 30, args: {forward_mode: macswap}}\n"
            "      - {name: ttl, type: ttl, core: 1, cost_cycles: 30}\n",
            "      - {name: ttl, type: ttl, core: 1, cost_cycles: 30}\n"
            "      - {name: pmd, type: external, core: 1, cost_cycles: 30, args: {forward_mode: macswap}}\n",
        )
    )
    out = tmp_path / "r.json"
    result = tandem("run", str(write_spec(spec)), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert_accounted(results)  # the hops of fw, count and ttl in order, testpmd after them
    workers = {w["name"]: w for w in results["workers"]}
    assert set(workers) == {"native@core1", "pmd"}
    assert workers["native@core1"]["nfs"] == "fw,count,ttl" and workers["pmd"]["nfs"] == "pmd"
    assert {w["exit"] for w in workers.values()} == {"exited with status 0"}
    report = results["scheduler"]["report"]
    assert report["wait_queues"] == {"1": ["native@core1", "pmd"]}
    assert report["nfs"]["native@core1"]["members"] == ["fw", "count", "ttl"]
    # Both took turns, and the worker's turn is sized for its three NFs together (60 + 30 + 30 cycles to 30).
    assert report["nfs"]["native@core1"]["switched_in"] > 10 and report["nfs"]["pmd"]["switched_in"] > 10
    assert report["nfs"]["native@core1"]["slice_us"] == pytest.approx(4 * report["nfs"]["pmd"]["slice_us"], rel=0.01)
    assert sum(sum(u["yielded"].values()) for u in report["nfs"].values()) == report["switches"]
    # 1 Mpps to ~120 cycles a packet: all of it arrives (as with unis above).
    chain = results["chains"][0]
    assert chain["window"]["delivered_mpps"] > 0.9 * chain["window"]["offered_mpps"], chain["window"]
    assert not results["warnings"], results["warnings"]


def test_packets_testpmd_drops_at_a_full_ring_are_accounted(write_spec, tmp_path, machine_before):
    # Behind testpmd an NF too slow to empty the ring in its CFS turn: the ring overflows, and testpmd frees what it
    # refuses.
    spec = mixed_spec("cfs", "max", 256).replace(
        "name: pmd2, type: external, core: 1, cost_cycles: 30, args: {forward_mode: macswap}",
        "name: slow, type: cost, core: 1, args: {cycles: 50000}",
    )
    out = tmp_path / "r.json"
    result = tandem("run", str(write_spec(spec)), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert_accounted(results)
    rings = {ring["name"]: ring for ring in results["rings"]}
    assert rings["c:pmd1->slow"]["dropped_full"] > 0, rings
    # testpmd's own TX-dropped statistics agreed with what its port received and sent (else a warning).
    assert not results["warnings"], results["warnings"]


def test_profiling_estimates_an_external_nf(write_spec, tmp_path, machine_before):
    # testpmd forwarding (io, macswap) and Tandem's pass NF all take packets from a ring and put them on the next, with
    # next to no work between: profiled in the same run, one after the other, testpmd's estimates are 0.7-0.85 of
    # pass's (29 and 35 against 41-42 cycles here, 4 runs). Light NFs' costs are memory traffic, and another process
    # moves them: pass's estimate read 75 cycles in one run here, and 107 (3.0x testpmd's 35) beside a stress-ng on
    # the control core. So testpmd's may be as low as a sixth of pass's, and at most 3x: an estimate that counted a
    # burst as a packet (32x too low) or timed testpmd's idle polls (hundreds of cycles) still lands outside.
    spec = (
        mixed_spec()
        .replace("cost_cycles: 30, args: {forward_mode: io}", "args: {forward_mode: io}")
        .replace("cost_cycles: 30, args: {forward_mode: macswap}", "args: {forward_mode: macswap}")
        .replace("{name: ttl, type: ttl, core: 1, cost_cycles: 30}", "{name: fwd, type: pass, core: 1}")
    )
    out = tmp_path / "r.json"
    result = tandem("run", str(write_spec(spec)), "--json", str(out), "--quiet", timeout=300)
    assert result.returncode == 0, result.stderr
    costs = run_results(out)["cycle_costs"]
    assert {costs[name]["source"] for name in ("pmd1", "pmd2", "fwd")} == {"profiled"}, costs
    native = costs["fwd"]["cycles_per_packet"]
    for name in ("pmd1", "pmd2"):
        assert native / 6 <= costs[name]["cycles_per_packet"] <= 3 * native, costs


def test_killed_testpmd_is_reported_by_name(write_spec, tmp_path, machine_before):
    out = tmp_path / "r.json"
    process, pids = start_run(write_spec(mixed_spec()), out)
    time.sleep(1)
    subprocess.run(["kill", "-9", str(pids["pmd2"])])
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired as error:
        process.kill()  # the run's own watchdogs failed too: show what it said
        raise AssertionError("the run did not end within 30 s of the kill: " + process.communicate()[1]) from error
    assert process.returncode == 1
    assert "NF pmd2" in stderr and "killed by signal 9" in stderr, stderr


@pytest.mark.parametrize("backend", ["fifo", "signal"])
def test_ctrl_c_stops_testpmd_and_restores_it(backend, write_spec, tmp_path, machine_before):
    out = tmp_path / "r.json"
    spec = mixed_spec().replace("scheduler: unis", f"scheduler: {{name: unis, options: {{backend: {backend}}}}}")
    process, pids = start_run(write_spec(spec), out)
    time.sleep(1.5)
    if process.poll() is not None:  # what it said, rather than a missing /proc entry
        raise AssertionError(f"the run ended before the Ctrl-C (exit {process.returncode}): {process.communicate()[1]}")
    threads = dpdk_control_threads(pids)
    # The fifo backend's unthrottled real-time pollers would starve a control thread on an NF core: they stay on the
    # control core. The signal backend stops and resumes whole processes, which wakes every thread of one at each
    # switch: an NF's control threads wait on its own core, or their wake-ups starve the control core (a test's own
    # clock there lost 20 s), and the manager's stay on the control core.
    nf_core = "0" if backend == "fifo" else "1"
    assert threads == {"manager": {"0"}} | {name: {nf_core} for name in pids}, threads
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == 130
    assert_accounted(run_results(out))
