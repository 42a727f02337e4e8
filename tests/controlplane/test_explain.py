"""explain on synthetic results: the parts of a chain's latency, weighted over runs, what moved between two files,
and bad input (no breakdown, not a results file) as a clear error."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, tandem
from controlplane.errors import SpecError
from controlplane.results.explain import breakdown_bars, chain_parts, explain, explain_difference


def breakdown(traced: int, fw1: tuple[float, float, float, float], exit_us: float) -> dict:
    """fw1's (queue, behind other work, not running, in NF) in µs; end to end is their sum."""
    queue, behind, idle, in_nf = fw1
    return {
        "traced_packets": traced,
        "too_long": 0,
        "untraced_hops": 0,
        "end_to_end_us": queue + in_nf + exit_us,
        "exit_queue_us": exit_us,
        "nfs": [
            {
                "nf": "fw1",
                "visits": traced,
                "queue_us": queue,
                "queue_behind_other_work_us": behind,
                "queue_not_running_us": idle,
                "queue_split_unknown": 0,
                "in_nf_us": in_nf,
            }
        ],
    }


def results(scheduler: str, parts: dict | None, switches: float = 1000.0) -> dict:
    document = json.loads((REPO / "tests" / "controlplane" / "data" / "run-results.json").read_text())
    document["scheduler"]["name"] = scheduler
    document["chains"][0]["latency_breakdown"] = parts
    for nf in document["nfs"]:
        nf["os"]["involuntary_switches_per_s"] = switches
    return document


def test_parts_are_weighted_by_traced_packets_and_sum_to_the_total():
    runs = [results("coop", breakdown(100, (10, 4, 6, 2), 1)), results("coop", breakdown(300, (30, 10, 20, 2), 1))]
    parts, total, traced = chain_parts(runs, "light")
    assert traced == 400
    assert parts["queue for fw1: behind other work"] == pytest.approx((4 * 100 + 10 * 300) / 400)
    assert parts["queue for fw1: NF not running"] == pytest.approx((6 * 100 + 20 * 300) / 400)
    assert parts["in NF fw1"] == pytest.approx(2)
    assert sum(parts.values()) == pytest.approx(total)
    assert list(parts)[-1] == "queue for the sink"


def test_a_chain_fed_by_a_wire_starts_with_the_wire():
    # The chain's entry a wire port: its frames' mean one-way delay leads the parts, and the end to end counts from
    # the other node's send. A chain fed otherwise has no such part.
    document = results("coop", breakdown(100, (10, 4, 6, 2), 1))
    document["chains"][0]["from_port"] = "west"
    document["ports"] = [{"name": "west", "wire": {"delay": {"mean_ns": 25_000.0}}}]
    parts, total, _ = chain_parts([document], "light")
    assert list(parts)[0] == "the wire into west (one-way, every frame)" and parts[list(parts)[0]] == 25.0
    assert total == pytest.approx(25 + 13) and sum(parts.values()) == pytest.approx(total)
    document["ports"][0]["wire"]["delay"] = {}  # no frame came: no delay to say
    assert not any(name.startswith("the wire") for name in chain_parts([document], "light")[0])


def test_explain_names_each_part_and_its_share():
    text = explain(results("unis", breakdown(50, (10, 4, 6, 2), 8)), "r.json")
    assert "chain light under unis: 20.0 us per packet end to end (50 traced packets in 1 run)" in text
    assert "queue for fw1: NF not running" in text and "30%" in text  # 6 of 20 us
    assert "NF counters under unis" in text


def test_the_difference_leads_with_what_moved_most():
    coop = results("coop", breakdown(100, (10, 4, 6, 2), 1))
    unis = results("unis", breakdown(100, (40, 5, 35, 2), 1), switches=9000.0)
    text = explain_difference(coop, unis, "coop.json", "unis.json")
    lines = text.splitlines()
    assert lines[0] == "chain light: unis 43.0 us vs coop 13.0 us per packet (+30.0 us)"
    assert lines[1] == "  +29.00 us queue for fw1: NF not running"
    assert "  +1.00 us queue for fw1: behind other work" in lines


def test_a_comparison_gives_one_bar_per_scheduler():
    comparison = {
        "schedulers": {
            "coop": {"results": [results("coop", breakdown(10, (1, 1, 0, 1), 1))]},
            "rtc": {"results": [results("rtc", None)]},
        }
    }
    assert list(breakdown_bars(comparison, "c.json")) == ["coop"]  # rtc ran without --profile


def test_files_without_a_breakdown_are_refused_with_the_flag_that_makes_one():
    with pytest.raises(SpecError, match="run with --profile"):
        explain(results("coop", None), "r.json")
    with pytest.raises(SpecError, match="not a results file"):
        explain({"name": "x"}, "x.json")


def test_the_command_exits_2_on_bad_files(tmp_path):
    (tmp_path / "bad.json").write_text("{")
    result = tandem("explain", str(tmp_path / "bad.json"))
    assert result.returncode == 2 and "not JSON" in result.stderr and "Traceback" not in result.stderr
    result = tandem("explain", str(tmp_path / "missing.json"))
    assert result.returncode == 2 and "cannot read it" in result.stderr


def test_the_command_prints_and_plots(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results("coop", breakdown(10, (1, 1, 0, 1), 1))))
    result = tandem("explain", str(path), "--plot", str(tmp_path / "b.png"))
    assert result.returncode == 0, result.stderr
    assert "chain light under coop" in result.stdout
    assert (tmp_path / "b.png").stat().st_size > 1000


def test_perf_counters_are_per_packet_and_refused_ones_are_named_not_zero():
    document = results("coop", breakdown(10, (1, 1, 0, 1), 1))
    document["profile"] = {
        "perf_counters": {
            "window_seconds": 1.0,
            "workers": [
                {
                    "worker": "light1",
                    "seconds": 1.0,
                    "packets": 1000,
                    "wait_over_run": 0.5,
                    "counters": {
                        "context_switches": {"total": 20, "per_second": 20.0, "per_packet": 0.02},
                        "task_clock_ns": {"total": 90000, "per_second": 90000.0, "per_packet": 90.0},
                    },
                    "unsupported": {
                        "cycles": "unsupported on this machine (No such file or directory, errno 2)",
                        "instructions": "unsupported on this machine (No such file or directory, errno 2)",
                    },
                }
            ],
        }
    }
    text = explain(document, "r.json")
    row = next(line for line in text.splitlines() if line.startswith("light1 ") and " 0.02 " in line)
    assert " 90 " in row and "n/a" in row and "0.50" in row
    assert "(n/a: cycles, instructions: unsupported on this machine (No such file or directory, errno 2))" in text
