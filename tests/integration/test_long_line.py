"""A line of 64 NFs on one core under every scheduler: every NF attaches, the packets balance, each policy does what
it promises, and nothing is left behind."""

from __future__ import annotations

import json

import pytest

from conftest import requires_root, tandem
from controlplane.spec import catalog
from integration.test_runs import assert_accounted, run_results

pytestmark = requires_root

NFS = 64  # a chain's most hops (the catalog's max_hops)
# Light NFs with their cost in the spec (unis needs one, and would profile them first); small rings, so the run
# reserves half the hugepages.
SPEC = f"""\
name: line{NFS}
duration: 0.5
warmup: 0.1
ring_capacity: 256
traffic: {{rate: max, size: 64, flows: 16}}
scheduler: SCHEDULER
chains:
  - name: c
    nfs:
""" + "".join(
    f"      - {{name: n{i}, type: cost, core: 1, args: {{cycles: 50}}, cost_cycles: 50}}\n" for i in range(NFS)
)

RR_TIMESLICE_S = 0.1
# The run fails a start that stalls (a worker that used no CPU for 10 s) by itself; the test's own limit only bounds
# it, sized for 64 processes started one by one on an emulated CPU (bench/cgroup_v2_host.py: ~2 s each, where our
# hosts take well under 0.1 s).
START_LIMIT_S = NFS * 5
# What each policy promises a line of spinning NFs on one core:
# - delivers: the NFs take turns in time for packets to pass all 64 within the run (chain order, yields, one process);
# - fair: every NF gets a share of the core, none keeps it; 64 hops take too many of the kernel's rounds to promise
#   delivery within the run;
# - round_robin: each NF keeps the core for a whole timeslice, so a packet needs 63 of them to pass the line: nothing
#   is delivered within a run shorter than that;
# - first_keeps: the first NF to run keeps the core, its successors never run.
PROMISE = {
    "cfs": "fair",
    "batch": "fair",
    "scc": "fair",  # batch CFS, nice -19, on reserved cores
    "rr": "round_robin",
    "fifo": "first_keeps",
    "coop": "delivers",
    "rtc": "delivers",
    "bubble": "delivers",
    "unis": "delivers",
    "hybrid": "delivers",  # UNiS over one native worker: rtc's single process, with nothing to switch it against
    "nfvnice": "delivers",
    "auto": "delivers",  # its model picks rtc for a line of native NFs
    "per_core": "delivers",  # UNiS on the core, as a module that sees the core's part of the run
}
SCHEDULER_SPEC = {
    "rr": f"{{name: rr, options: {{timeslice_ms: {int(RR_TIMESLICE_S * 1000)}}}}}",
    "per_core": "{name: per_core, options: {cores: [{core: 1, name: unis}]}}",
}
ONE_PROCESS = {"rtc", "bubble", "hybrid", "auto"}  # a core's NFs as one worker (auto: as rtc, which it picks)


def test_every_scheduler_has_a_promise_here():
    assert set(PROMISE) == set(catalog.scheduler_names())


@pytest.mark.parametrize("scheduler", PROMISE)
def test_a_line_of_64_nfs_on_one_core(scheduler, write_spec, tmp_path, machine_before):
    out = tmp_path / "results.json"
    spec = write_spec(SPEC.replace("SCHEDULER", SCHEDULER_SPEC.get(scheduler, scheduler)))
    result = tandem("run", str(spec), "--json", str(out), "--quiet", timeout=START_LIMIT_S)
    assert result.returncode == 0, result.stderr  # every NF attached: a late one fails the run
    results = run_results(out)
    assert_accounted(results)
    chain = results["chains"][0]
    assert chain["generated"] > 0
    assert [nf["name"] for nf in results["nfs"]] == [f"n{i}" for i in range(NFS)]
    assert len(results["workers"]) == (1 if scheduler in ONE_PROCESS else NFS)
    assert {worker["exit"] for worker in results["workers"]} == {"exited with status 0"}
    window_s = chain["window"]["seconds"]
    # Each worker's share of its core in the measurement window (/proc schedstat).
    shares = [worker["os"].get("cpu_share") or 0 for worker in results["workers"]]
    promise = PROMISE[scheduler]
    if promise == "delivers":
        # The hop check passed: each one went through all 64 NFs in order. (A string, which pytest shows whole.)
        assert chain["delivered"] > 0, json.dumps(
            {
                "chain": {key: chain[key] for key in ("generated", "dropped", "in_flight", "hop_errors", "window")},
                "batches": [nf["batches"] for nf in results["nfs"]],
                "scheduler": results["scheduler"]["report"],
                "warnings": results.get("warnings"),
            }
        )
    elif promise == "fair":
        # Equal weights: a round gives each NF a slice of a tick or two (4 ms here, 10-20 ms at HZ=100), and the run
        # (warm-up, window, drain: 0.8 s) outlasts 64 of them; no NF gets much more than its 1/64 of the window.
        assert all(nf["batches"] + nf["empty_polls"] > 0 for nf in results["nfs"]), "an NF never ran"
        assert max(shares) < 0.1, shares
    elif promise == "round_robin":
        assert chain["delivered"] == 0  # the run (warm-up, window, drain: 0.8 s) is far shorter than 63 slices
        ran = [share for share in shares if share > 0]
        assert 1 <= len(ran) <= window_s / RR_TIMESLICE_S + 2, shares  # one NF a slice, at the window's ends a part
    else:
        assert chain["delivered"] == 0
        assert sum(1 for share in shares if share > 0) == 1, shares
        assert max(shares) > 0.9, shares
    if scheduler in ("unis", "per_core"):
        report = results["scheduler"]["report"]
        if scheduler == "per_core":
            [core] = report["cores"]
            assert (core["core"], core["scheduler"]) == (1, "unis"), core
            report = core["report"]
        assert report["wait_queues"] == {"1": [f"n{i}" for i in range(NFS)]}  # chain order
        assert all(nf["switched_in"] > 0 for nf in report["nfs"].values())
