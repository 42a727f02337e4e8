"""Bubble on real NFs: user-level threads with exact accounting and hop order, batch sizes that follow
priority weights, load measurement that ignores busy polling, and NF migration between local schedulers."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import time

import pytest

from conftest import BASE_SPEC, REPO, requires_root, tandem
from integration.test_runs import assert_accounted, run_results

pytestmark = requires_root

BUBBLE_BASE = BASE_SPEC.replace("scheduler: coop", "scheduler: bubble")

# Three independent NFs on core 1, each offered 8 Mpps of 500 ns packets, with weights 1:2:3. The core is overloaded
# as long as the generator offers more than 2 Mpps in all (it offers 6-23 Mpps on our hosts): at 120 ns a clean-clone
# run whose generator gave only 2 Mpps a chain left the core idle part of the time and all three chains equal. The
# adaptation period is longer than the run, so the batches stay those the weight rule set: the test is
# of that rule and of batches dividing an overloaded core, not of how Algorithm 1 reacts to the generator's wobble.
PRIORITIES = """\
name: priorities
duration: 1.5
warmup: 0.5
traffic: {size: 64, flows: 64, rate: 8 Mpps}
scheduler: {name: bubble, options: {period_ms: 60000}}
chains:
  - {name: low, nfs: [{name: w1, type: cost, core: 1, weight: 1, args: {ns: 500}}]}
  - {name: mid, nfs: [{name: w2, type: cost, core: 1, weight: 2, args: {ns: 500}}]}
  - {name: high, nfs: [{name: w3, type: cost, core: 1, weight: 3, args: {ns: 500}}]}
"""

# Two NFs and a spare local scheduler on core 1 standing in for a second core. 2 Mpps x 2 NFs x 200 ns is 0.8 of
# a core of work on any host (time, not TSC cycles, whose rate differs by 2x between hosts), well above mu = 0.5,
# so the first measurement window raises a scale event.
MIGRATION = """\
name: migration
duration: 1.5
warmup: 0.3
traffic: {size: 64, flows: 64, rate: 1 Mpps}
scheduler: {name: bubble, options: {spare_workers_per_core: 1, mu: 0.5, load_period_ms: 200}}
chains:
  - name: c
    nfs:
      - {name: a, type: cost, core: 1, args: {ns: 50}}
      - {name: b, type: cost, core: 1, args: {ns: 600}}
"""

IDLE = """\
name: idle
duration: 1.2
warmup: 0.1
traffic: {size: 64, flows: 16, rate: 1}
scheduler: {name: bubble, options: {load_period_ms: 200}}
chains:
  - name: c
    nfs:
      - {name: f1, type: firewall, core: 1, args: {synthetic_rules: 100}}
      - {name: f2, type: firewall, core: 1, args: {synthetic_rules: 100}}
      - {name: f3, type: firewall, core: 1, args: {synthetic_rules: 100}}
"""


# Fig. 5 in small: no traffic, then 2 Mpps, every half second. Three NFs of 100 ns a packet: 0.6 of a core of
# work in the loaded steps on any host, so "clearly loaded" has a floor that holds everywhere.
STEPPED = (
    IDLE.replace("duration: 1.2\nwarmup: 0.1", "duration: 2\nwarmup: 0")
    .replace("rate: 1}", "rate_steps: [0, 2 Mpps], step_seconds: 0.5}")
    .replace("load_period_ms: 200", "load_period_ms: 100")
    .replace("type: firewall, core: 1, args: {synthetic_rules: 100}", "type: cost, core: 1, args: {ns: 100}")
)


def run(write_spec, tmp_path, text: str) -> dict:
    out = tmp_path / "r.json"
    result = tandem("run", str(write_spec(text)), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert_accounted(results)  # exact, and every packet crossed its NFs in chain order
    return results


def test_one_process_runs_the_chain_as_user_level_threads(write_spec, tmp_path, machine_before):
    results = run(write_spec, tmp_path, BUBBLE_BASE)
    assert len(results["workers"]) == 1
    report = results["scheduler"]["report"]
    assert report["order_tables"] == {"bubble@core1": ["a", "b", "c3"]}
    # One process runs a, b and c3 in turn on each batch: nothing queues between them, so what entered comes out but
    # for what the sink's full exit ring refused (0.01 % here, at 28 M packets).
    chain = results["chains"][0]
    assert chain["delivered"] >= 0.5 * chain["generated"] > 0, chain
    for nf in results["nfs"]:
        assert nf["os"]["involuntary_switches_per_s"] < 1000, nf  # no kernel switch between NFs: one thread per core


def test_throughput_follows_priority_weights_under_overload(write_spec, tmp_path, machine_before):
    results = run(write_spec, tmp_path, PRIORITIES)
    # The weight rule sets the batches at start, and no adaptation period ends within the run to move them.
    nfs = results["scheduler"]["report"]["nfs"]
    assert {name: nf["batch_initial"] for name, nf in nfs.items()} == {"w1": 336, "w2": 688, "w3": 1024}, nfs
    assert all(nf["batch_final"] == nf["batch_initial"] for nf in nfs.values()), nfs
    out = {c["name"]: c["window"]["delivered_mpps"] for c in results["chains"]}
    assert 1.5 < out["mid"] / out["low"] < 2.5, out
    assert 2.2 < out["high"] / out["low"] < 3.8, out


def test_load_measurement_ignores_busy_polling(write_spec, tmp_path, machine_before):
    results = run(write_spec, tmp_path, IDLE)
    samples = results["scheduler"]["report"]["load"]
    assert len(samples) >= 4
    # Traffic of 1 pps: a packet or two in the run. Load counts only batches that received packets, so a window
    # can show load only where a packet passed an NF; such a batch, preempted by the kernel, once showed 27 %
    # of a window (a clean-clone suite run). Every other window must show none.
    passes = results["chains"][0]["generated"] * len(results["nfs"])
    loaded = [sample for sample in samples if sample["cores"]["1"]["utilisation"] >= 0.05]
    assert len(loaded) <= passes, (passes, loaded)
    assert len(loaded) < len(samples) / 2, samples
    # What counting from before the poll would claim: the empty receive calls' share of the loop, which is 0.48-0.66
    # here depending on the machine's noise (the fiber switches between them are not counted). The median of the
    # windows: a vCPU stalled for half of one 30 ms window moves that window either way.
    claimed = statistics.median(sample["cores"]["1"]["counting_busy_polls"] for sample in samples)
    assert claimed > 0.25, samples


def test_overloaded_scheduler_migrates_an_nf_to_the_spare(write_spec, tmp_path, machine_before):
    results = run(write_spec, tmp_path, MIGRATION)
    report = results["scheduler"]["report"]
    assert report["migrations"], report["scale_events"]
    moved = report["migrations"][0]
    # The rule: from the tail of the order table, the first NF whose measured load fits under mu on the spare.
    # 1 Mpps at 50 + 600 ns a packet, plus the per-packet overhead both pay alike, saturates core 1 when the
    # generator keeps its rate (0.95 here), and b then takes the larger share (here a 0.24, b 0.71) and does not fit
    # under 0.5; beside a stress-ng on the control core the generator fell short and core 1 read 0.54, where b fits.
    # So the expectation comes from the load sample the decision was made on, not from the workload's shape.
    sample = next(s for s in report["load"] if s["t_s"] == moved["t_s"])
    room = 0.5 - sample["workers"]["bubble@core1.spare1"]
    expected = next(nf for nf in ("b", "a") if sample["nfs"][nf] <= room)
    assert (moved["nf"], moved["from"], moved["to"]) == (expected, "bubble@core1", "bubble@core1.spare1"), sample
    assert report["nfs"][expected]["worker"] == "bubble@core1.spare1"
    assert results["chains"][0]["delivered"] > 0


def until_started(process: subprocess.Popen, timeout: float = 60) -> str:
    """Reads the run's progress until its `started` line (its workers attached); returns that line."""
    line = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not line.startswith("started"):
        line = process.stderr.readline()
    return line


def test_a_killed_worker_is_named_and_nothing_is_left_behind(write_spec, tmp_path, machine_before):
    out = tmp_path / "r.json"
    process = subprocess.Popen(
        [str(REPO / "tandem"), "run", str(write_spec(BUBBLE_BASE)), "--duration", "20", "--json", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pid = int(re.search(r"pid (\d+)", until_started(process)).group(1))
    time.sleep(1)
    subprocess.run(["kill", "-9", str(pid)])
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 1, stderr
    assert "killed by signal 9" in stderr and "a,b,c3" in stderr, stderr


def test_ctrl_c_stops_a_bubble_run_cleanly(write_spec, tmp_path, machine_before):
    out = tmp_path / "r.json"
    process = subprocess.Popen(
        [str(REPO / "tandem"), "run", str(write_spec(BUBBLE_BASE)), "--duration", "20", "--json", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    until_started(process)  # a run interrupted while it starts has no results to write (a busy machine: > 2 s)
    time.sleep(1)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == 130
    assert_accounted(run_results(out))


AUTO = """\
name: auto
duration: 1
warmup: 0.2
placement: auto
traffic: {size: 64, flows: 64}
scheduler: bubble
chains:
  - {name: a, traffic: {rate: RATE_A pps}, nfs: [{name: fw, type: firewall, args: {synthetic_rules: 10}}, \
{name: enc, type: ipsec}]}
  - {name: b, traffic: {rate: RATE_B pps}, nfs: [{name: fw2, type: firewall, args: {synthetic_rules: 10}}]}
"""


@pytest.fixture(scope="module")
def measured_models(tmp_path_factory):
    """The batch-time models of AUTO's NFs, profiled once on this machine into a cache the module's tests share.

    What fits a core depends on the host (one IPsec NF profiled 800-1400 cycles a packet here, and hosts differ by
    2x), so the tests below set their rates from these models, not from constants."""
    cache = tmp_path_factory.mktemp("cache")
    spec = tmp_path_factory.mktemp("spec") / "auto.yaml"
    spec.write_text(AUTO.replace("RATE_A", "1000").replace("RATE_B", "1000"))
    out = spec.with_suffix(".json")
    result = tandem(
        "place",
        str(spec),
        "--json",
        str(out),
        "--quiet",
        timeout=300,
        env=dict(os.environ, TANDEM_CACHE_DIR=str(cache)),
    )
    assert result.returncode == 0, result.stderr
    return cache, json.loads(out.read_text())["models"]


def rates_for(models: dict, share_a: float, share_b: float) -> str:
    """AUTO with each chain offered the rate that takes `share` of a core by the models' cost at the largest batch
    (the cost the placement constraint charges)."""

    def per_packet(*names):
        return sum(models[n]["k_cycles"] + models[n]["c_cycles"] / 1024 for n in names)

    hz = models["fw"]["tsc_hz"]
    return AUTO.replace("RATE_A", f"{share_a * hz / per_packet('fw', 'enc'):.0f}").replace(
        "RATE_B", f"{share_b * hz / per_packet('fw2'):.0f}"
    )


def test_auto_placement_profiles_solves_and_runs(measured_models, write_spec, tmp_path, machine_before, monkeypatch):
    cache, models = measured_models
    monkeypatch.setenv("TANDEM_CACHE_DIR", str(cache))  # the run places with the very models the rates came from
    # 0.4 of the one NF core by those models: the solver must accept both chains whatever the host's speed.
    results = run(write_spec, tmp_path, rates_for(models, 0.25, 0.15))
    placement = results["placement"]
    assert placement["accepted"] == ["a", "b"]
    assert set(placement["placement"].values()) == {1}  # the only core but the control core on this machine
    assert {nf["name"]: nf["core"] for nf in results["nfs"]} == placement["placement"]
    initial = {name: nf["batch_initial"] for name, nf in results["scheduler"]["report"]["nfs"].items()}
    # Bubble turns the planned rates into initial batches: the fastest chain's NFs get the upper bound (1024), the
    # others their share of it, rounded to the 16-packet quantum.
    planned = placement["planned_rate_pps"]
    fastest = max(planned.values())
    for name, batch in initial.items():
        share = 1024 * planned[name] / fastest
        assert batch % 16 == 0 and abs(batch - max(share, 16)) <= 8, (name, batch, share, planned)
    assert max(initial.values()) == 1024


def test_infeasible_placement_exits_2_naming_the_constraint(measured_models, write_spec, machine_before, monkeypatch):
    cache, models = measured_models
    monkeypatch.setenv("TANDEM_CACHE_DIR", str(cache))
    # Chain a alone needs 1.5 cores by the models: infeasible on the one NF core whatever the host.
    result = tandem("run", str(write_spec(rates_for(models, 1.5, 0.1))), "--quiet")
    assert result.returncode == 2, result.stderr
    assert "infeasible placement" in result.stderr and "capacity constraint" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_measured_load_follows_a_rate_that_changes(write_spec, tmp_path, machine_before):
    results = run(write_spec, tmp_path, STEPPED)
    generated = results["chains"][0]["generated"]
    assert 1_600_000 <= generated <= 2_000_032, generated  # 2 Mpps for two of the four half-seconds
    by_step = {0: [], 1: []}
    for sample in results["scheduler"]["report"]["load"]:
        opened = sample["t_s"] - 0.03
        step, into = divmod(opened, 0.5)
        if into > 0.02 and opened + 0.03 < step * 0.5 + 0.5:  # windows wholly inside a step
            by_step[int(step) % 2].append(sample["cores"]["1"]["utilisation"])
    assert by_step[0] and by_step[1], by_step
    assert max(by_step[0]) < 0.05, by_step  # silent steps: nothing to do, nothing measured
    # At least half the 0.6 of a core the NFs' own work takes: windows straddle step edges by up to 20 ms. The
    # median, not every window: a vCPU stalled for 15 ms of a 30 ms window (a host's steal) halves that one.
    loaded = statistics.median(by_step[1])
    assert loaded > 0.3 and loaded > 3 * max(by_step[0]), by_step
