"""Run summaries and reports: totals, worst-chain latency, unavailable counters and accounting verdicts."""

import copy
import csv
import io

from controlplane.results.comparison_report import CSV_COLUMNS, comparison_csv, comparison_report, run_summary
from controlplane.results.run_report import run_report

CHAIN = {
    "name": "c",
    "nfs": ["a"],
    "generated": 1000,
    "delivered": 900,
    "delivered_bytes": 57600,
    "hop_errors": 0,
    "dropped": {"total": 90, "rings": {"c:entry": 90, "c:exit": 0}, "nfs": {"a": 0}},
    "in_flight": {"total": 10, "rings": 10, "nfs": 0},
    "accounting_exact": True,
    "window": {
        "seconds": 1.0,
        "generated": 800,
        "delivered": 700,
        "offered_mpps": 0.8,
        "delivered_mpps": 0.7,
        "delivered_gbps": 0.36,
    },
    "latency_us": {"samples": 10, "p5": 1.0, "p50": 2.0, "p95": 3.0, "p99": 4.0, "max": 5.0},
}
RESULTS = {
    "name": "t",
    "warmup_s": 0.5,
    "duration_s": 1.0,
    "scheduler": {"name": "coop", "options": {"k": 8}, "report": {}},
    "chains": [CHAIN],
    "nfs": [
        {
            "name": "a",
            "type": "macswap",
            "core": 1,
            "packets_dropped": 0,
            "window": {"in_mpps": 0.7, "cycles_per_packet": 30.0, "busy_share": 0.2},
            "os": {
                "cpu_share": 0.9,
                "runnable_wait_share": 0.1,
                "voluntary_switches_per_s": 5.0,
                "involuntary_switches_per_s": 7.0,
                "unavailable": ["migrations_per_s"],
            },
        }
    ],
    "workers": [{"name": "a", "os": {"voluntary_switches_per_s": 5.0, "involuntary_switches_per_s": 7.0}}],
    "accounting": {"exact": True, "mbufs_in_use": 10, "in_flight": 10, "pool_matches_in_flight": True},
    "warnings": [],
    "error": None,
}


def test_summary_sums_chains_and_takes_the_worst_latency():
    results = copy.deepcopy(RESULTS)
    second = copy.deepcopy(CHAIN)
    second["name"] = "d"
    second["window"]["delivered_mpps"] = 0.3
    second["latency_us"]["p99"] = 40.0
    results["chains"].append(second)
    summary = run_summary(results)
    assert summary["delivered_mpps"] == 1.0
    assert summary["p99_us"] == 40.0
    assert summary["dropped"] == 180
    assert summary["context_switches_per_s"] == 12.0
    assert summary["accounting_exact"] is True


def test_summary_flags_inexact_accounting_and_unavailable_switches():
    results = copy.deepcopy(RESULTS)
    results["accounting"]["exact"] = False
    results["workers"][0]["os"] = {"unavailable": ["voluntary_switches_per_s"]}
    summary = run_summary(results)
    assert summary["accounting_exact"] is False
    assert summary["context_switches_per_s"] is None


def test_report_shows_accounting_and_says_what_is_unavailable():
    text = run_report(RESULTS)
    assert "1,000 generated = 900 delivered + 90 dropped + 10 in flight: exact" in text
    assert "drops at: c:entry 90" in text
    assert "migrations_per_s not available on this machine" in text
    broken = copy.deepcopy(RESULTS)
    broken["chains"][0]["accounting_exact"] = False
    assert "MISMATCH" in run_report(broken)
    cut = copy.deepcopy(RESULTS)
    cut["accounting"] |= {
        "pool_matches_in_flight": None,
        "interrupted_frees": [{"nf": "a", "worker": "w0", "mbufs": 3}],
        "pool_difference": 1952,
    }
    assert "pool not checked" in run_report(cut) and "a (3 mbufs, worker w0)" in run_report(cut)
    assert "+1952 mbufs against the packets in flight" in run_report(cut)
    assert "MISMATCH" not in run_report(cut)
    copies = copy.deepcopy(RESULTS)
    copies["accounting"] |= {
        "pool_matches_in_flight": None,
        "pool_difference": -40,
        "pool_unchecked_because": "copies of a parallel group's packets are in flight, and copies share one mbuf",
    }
    copies["chains"][0]["copies"] = {"forked": 500, "merged": 460}
    text = run_report(copies)
    assert "pool not checked: copies of a parallel group's packets are in flight" in text and "-40 mbufs" in text
    assert " + 500 copies = " in text and " dropped + 460 merged + " in text


def test_report_shows_what_each_nf_counted_itself():
    results = copy.deepcopy(RESULTS)
    results["nfs"][0]["report"] = {"requests_checked": 40, "dropped_by_pattern": [3, 0]}
    assert "a (macswap): requests_checked 40, dropped_by_pattern [3, 0]" in run_report(results)
    assert "before it" not in run_report(results)
    # Instances before the last (new arguments, a re-layout, a crash) are counted and said how they ended.
    results["nfs"][0]["earlier_reports"] = [
        {"ended": "new arguments", "report": {"requests_checked": 10}},
        {"ended": "re-layout", "at_s": 2.0, "report": {"requests_checked": 12}},
        {"ended": "re-layout", "at_s": 3.0, "report": {"requests_checked": 1}},
        {"ended": "crash", "at_s": 4.0, "report": None},
    ]
    said = "a: the above is its last instance's; 4 before it ended by new arguments x1, re-layout x2, crash x1"
    assert said in run_report(results)


def test_comparison_ratio_to_rtc():
    def entry(mpps):
        run = run_summary(RESULTS) | {"delivered_mpps": mpps}
        return {
            "runs": [run],
            "median": {k: run[k] for k in ("delivered_mpps", "p50_us", "p99_us", "dropped", "context_switches_per_s")},
        }

    comparison = {
        "spec_name": "t",
        "repeat": 1,
        "duration_s": 1.0,
        "machine": "m",
        "schedulers": {"cfs": entry(0.1), "rtc": entry(4.0)},
    }
    text = comparison_report(comparison)
    assert "2.5%" in text and "100.0%" in text and "1/1 exact" in text


def test_comparison_csv_has_a_row_per_run_paired_with_rtcs_and_one_for_a_failure():
    def entry(*mpps, error=None):
        runs = [run_summary(RESULTS) | {"delivered_mpps": m} for m in mpps]
        return {"runs": runs, "median": None} | ({"error": error} if error else {})

    comparison = {
        "spec_name": "t",
        "repeat": 2,
        "duration_s": 1.0,
        "machine": "m",
        "schedulers": {
            "cfs": entry(1.0, 3.0),
            "rtc": entry(4.0, 6.0),
            "fifo": entry(error="NF a (pid 7) killed by signal 9"),
        },
    }
    rows = list(csv.DictReader(io.StringIO(comparison_csv(comparison))))
    assert list(rows[0]) == CSV_COLUMNS and len(rows) == 5
    cfs = [r for r in rows if r["scheduler"] == "cfs"]
    assert [(r["run"], float(r["vs_rtc"])) for r in cfs] == [("1", 0.25), ("2", 0.5)]  # each with its own round's rtc
    assert cfs[0]["p50_us"] == "2.0" and cfs[0]["accounting_exact"] == "True" and cfs[0]["error"] == ""
    (failed,) = [r for r in rows if r["scheduler"] == "fifo"]
    assert failed["error"] == "NF a (pid 7) killed by signal 9" and failed["delivered_mpps"] == ""


def test_a_run_summary_gives_the_first_nfs_cost_and_the_report_the_generators():
    results = copy.deepcopy(RESULTS) | {"generator_build_cycles_per_packet": 104.0}
    assert run_summary(results)["entry_nf_cycles_per_packet"] == 30.0  # the first NF of the chain
    assert "generator: 104 cycles to build a frame" in run_report(results)


def test_unis_report_says_how_much_of_the_control_core_its_switches_take():
    results = copy.deepcopy(RESULTS)
    # 30,000 switches in 1.5 s (0.5 warm-up + 1.0 measured) at 5 us each: 100 ms of every second.
    results["scheduler"] = {
        "name": "unis",
        "options": {},
        "report": {"switches": 30000, "controller_us_per_switch": 5.0},
    }
    assert (
        "30,000 switches (~20,000/s), 5.0 us in the process controller per switch (10 % of the control core)"
        in run_report(results)
    )


def test_unis_report_says_what_ended_the_turns():
    results = copy.deepcopy(RESULTS)
    reasons = {"input_starved": 1, "output_full": 3, "slice_expired": 0}
    results["scheduler"] = {
        "name": "unis",
        "options": {},
        "report": {
            "switches": 8,
            "controller_us_per_switch": 5.0,
            "nfs": {"a": {"yielded": reasons}, "b": {"yielded": reasons}},
        },
    }
    assert "turns ended by: input starved 25 %, output full 75 %, slice expired 0 %" in run_report(results)


def test_the_compute_bound_is_set_by_the_busiest_core():
    results = copy.deepcopy(RESULTS) | {"tsc_hz": 2.5e9}
    # 1 Mpps delivered; core 1 spends 100 + 150 cycles a packet, core 2 (an NF half the packets pass) 2 x 200 x 0.5.
    results["chains"][0]["window"]["delivered_mpps"] = 1.0
    nf = results["nfs"][0]
    results["nfs"] = [
        nf | {"name": "a", "core": 1, "window": nf["window"] | {"in_mpps": 1.0, "cycles_per_packet": 100.0}},
        nf | {"name": "b", "core": 1, "window": nf["window"] | {"in_mpps": 1.0, "cycles_per_packet": 150.0}},
        nf | {"name": "c", "core": 2, "window": nf["window"] | {"in_mpps": 0.5, "cycles_per_packet": 200.0}},
    ]
    assert run_summary(results)["compute_bound_mpps"] == 10.0  # 2.5e9 / 250 cycles
    results["nfs"][2]["window"]["cycles_per_packet"] = 1000.0  # core 2 now needs 500 a packet: it bounds
    assert run_summary(results)["compute_bound_mpps"] == 5.0
    results["nfs"][2]["window"]["cycles_per_packet"] = None
    assert run_summary(results)["compute_bound_mpps"] is None  # a cost unknown: no bound, not a wrong one
    assert run_summary(RESULTS)["compute_bound_mpps"] is None  # no clock given


def test_the_comparison_shows_each_scheduler_against_the_bound_from_rtcs_runs():
    def entry(mpps, bound):
        run = run_summary(RESULTS) | {"delivered_mpps": mpps, "compute_bound_mpps": bound}
        return {
            "runs": [run],
            "median": {k: run[k] for k in ("delivered_mpps", "p50_us", "p99_us", "dropped", "context_switches_per_s")},
        }

    comparison = {
        "spec_name": "t",
        "repeat": 1,
        "duration_s": 1.0,
        "machine": "m",
        "schedulers": {"cfs": entry(1.0, 99.0), "rtc": entry(4.0, 8.0)},
    }
    text = comparison_report(comparison)
    assert "compute-only bound, 8.00 Mpps" in text and "from rtc's runs" in text
    assert "12.5%" in text and "50.0%" in text  # cfs 1 and rtc 4 of 8
    del comparison["schedulers"]["rtc"]
    assert "from every run" in comparison_report(comparison)


def test_the_comparison_shows_each_scheduler_against_the_best_rtc_over_batch_sizes():
    def entry(mpps):
        run = run_summary(RESULTS) | {"delivered_mpps": mpps}
        return {
            "runs": [run],
            "median": {k: run[k] for k in ("delivered_mpps", "p50_us", "p99_us", "dropped", "context_switches_per_s")},
        }

    # As written to JSON: the batch sizes are keys, so strings; 1024 sorts before 32 as text, not as a batch size.
    best = {"mpps": 5.0, "batch": 256, "by_batch": {"32": 4.0, "256": 5.0, "1024": 4.5}, "skipped": []}
    comparison = {
        "spec_name": "t",
        "repeat": 1,
        "duration_s": 1.0,
        "machine": "m",
        "schedulers": {"bubble": entry(6.0), "rtc": entry(4.0)},
        "ceilings": {"best_rtc": best},
    }
    text = comparison_report(comparison)
    assert "best of rtc over batches 32...1024, 5.00 Mpps at batch 256" in text
    assert "120.0%" in text and "80.0%" in text  # bubble 6 and rtc 4 of the best rtc's 5
    comparison["ceilings"]["best_rtc"] = {
        "mpps": None,
        "batch": None,
        "by_batch": {},
        "unavailable": "rtc cannot run external NFs",
    }
    assert "32...1024 (rtc cannot run external NFs)" in comparison_report(comparison)
