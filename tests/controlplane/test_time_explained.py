"""SCC's Table 3 for an NF process (controlplane/results/time_explained.py): counters times primitive latencies,
exactly, with what the machine does not count said, never taken as 0; and the policy whose switches apply under each
scheduler."""

from __future__ import annotations

import pytest

from controlplane.results.time_explained import explain_process, memory_levels, switch_policy

PRIMITIVES = {
    "context_switch": {
        "cfs": {"median_ns": 2000.0},
        "batch": {"median_ns": 1500.0},
        "rr": {"unsupported": "EPERM"},
        "fifo": {"median_ns": 1800.0},
    },
    "syscall": {
        "getppid": {"median_ns": 100.0},
        "sendto_packet": {"median_ns": 900.0},
        "recvfrom_packet": {"median_ns": 500.0},
    },
}
MEMORY = {"cache": 10.0, "memory": 100.0, "page_walk": 30.0}


def counts(**per_packet):
    return {name: {"per_packet": value} for name, value in per_packet.items()}


def test_without_hardware_counters_switches_and_calls_explain_and_the_rest_is_said_unexplained():
    result = explain_process(
        counts(context_switches=0.5, syscalls=2.0, task_clock_ns=4000.0), PRIMITIVES, "cfs", True, MEMORY
    )
    assert result["terms"] == {
        "context switches x switch latency": 1000.0,  # 0.5 x 2000
        "system calls x call latency": 200.0,  # 2 x a null call
        "packets x a packet socket's receive and send": 1400.0,
    }  # 900 + 500, once a packet
    assert result["explained_ns"] == 2600.0
    assert result["unexplained_share"] == pytest.approx(0.35)
    # This VM counts no cache or TLB misses: the terms are missing, not zero.
    assert set(result["missing"]) == {
        "L1d misses served by the caches x cache latency",
        "LLC misses x memory latency",
        "dTLB misses x page walk",
    }


def test_a_poll_mode_nfs_calls_cost_a_null_call():
    result = explain_process(
        counts(context_switches=0.0, syscalls=0.01, task_clock_ns=50.0), PRIMITIVES, "cfs", False, MEMORY
    )
    assert result["terms"]["system calls x call latency"] == pytest.approx(1.0)
    assert "packets x a packet socket's receive and send" not in result["terms"]  # its packets move through rings


def test_with_hardware_counters_table_3s_memory_terms_are_added():
    result = explain_process(
        counts(
            context_switches=0.0,
            syscalls=0.0,
            task_clock_ns=1000.0,
            l1d_read_misses=5.0,
            llc_read_misses=2.0,
            dtlb_read_misses=1.0,
        ),
        PRIMITIVES,
        "batch",
        False,
        MEMORY,
    )
    assert result["terms"]["L1d misses served by the caches x cache latency"] == 30.0  # (5 - 2) x 10
    assert result["terms"]["LLC misses x memory latency"] == 200.0
    assert result["terms"]["dTLB misses x page walk"] == 30.0
    assert result["explained_ns"] == 260.0 and result["missing"] == []


def test_an_unmeasured_policy_leaves_its_term_missing():
    result = explain_process(
        counts(context_switches=1.0, syscalls=0.0, task_clock_ns=1000.0), PRIMITIVES, "rr", False, MEMORY
    )
    assert "context switches x switch latency" in result["missing"]
    assert "context switches x switch latency" not in result["terms"]


def test_no_task_clock_means_no_share():
    assert explain_process(counts(context_switches=1.0), PRIMITIVES, "cfs", False, MEMORY)["unexplained_share"] is None


def test_the_policy_is_the_one_the_scheduler_reported():
    # coop runs its NFs on FIFO by default: its report says so, whatever its name would suggest.
    assert switch_policy({"name": "coop", "options": {}, "report": {"policy": "fifo", "k": 1}}) == "fifo"
    assert switch_policy({"name": "unis", "options": {"backend": "signals"}, "report": {"policy": "cfs"}}) == "cfs"
    assert switch_policy({"name": "scc", "options": {"policy": "rr"}, "report": {"policy": "rr"}}) == "rr"
    # Results from before the modules reported it: no policy, so the switch term is missing, not guessed.
    assert switch_policy({"name": "coop", "options": {}}) is None
    assert switch_policy({"name": "bubble", "report": {"policy": "sched_deadline"}}) is None
    result = explain_process(counts(context_switches=1.0, task_clock_ns=100.0), PRIMITIVES, None, False, MEMORY)
    assert "context switches x switch latency" in result["missing"]


def test_memory_levels_come_from_the_pointer_chase():
    table = {(256 << 10, 64): 5.0, (4 << 20, 64): 12.0, (256 << 20, 64): 90.0, (256 << 20, 4096): 120.0}
    # The page walk: one line a page over 256 MiB (120) less the same number of lines, cached, over 4 MiB (12).
    assert memory_levels(lambda size, stride: table.get((size, stride))) == {
        "cache": 5.0,
        "memory": 90.0,
        "page_walk": 108.0,
    }
    assert memory_levels(lambda size, stride: None)["page_walk"] is None
