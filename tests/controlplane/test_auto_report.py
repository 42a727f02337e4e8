"""auto's decisions as the run report shows them: the chosen policy and why, every candidate's predictions, and the
later decisions, applied or not."""

from __future__ import annotations

from controlplane.results.auto_report import auto_decision_lines
from controlplane.results.time_explained import switch_policy


def prediction(policy: str, mpps: float, feasible: bool = True) -> dict:
    if not feasible:
        return {"policy": policy, "feasible": False, "infeasible_because": "an external NF"}
    return {
        "policy": policy,
        "feasible": True,
        "throughput_pps": mpps * 1e6,
        "latency_us": 10.0,
        "jain": 1.0,
        "cpu_share": 1.0,
    }


REPORT = {
    "objective": "efficiency",
    "slo_p99_us": None,
    "policy": "unis",
    "policy_switches": 1,
    "decisions": [
        {
            "policy": "nfvnice",
            "reason": "efficiency: nfvnice is predicted 1.5 Mpps per busy core",
            "t_s": 0.0,
            "measured": False,
            "predictions": [prediction("rtc", 2.0, feasible=False), prediction("nfvnice", 0.02)],
        },
        {
            "policy": "rtc",
            "reason": "efficiency: rtc is predicted 2.8 Mpps per busy core",
            "t_s": 1.6,
            "measured": True,
            "applied": False,
            "offered_pps": [5e7],
            "why_not": "it needs a restart",
        },
        {
            "policy": "unis",
            "from": "nfvnice",
            "reason": "at the measured rates unis is predicted better",
            "t_s": 1.8,
            "measured": True,
            "applied": True,
            "offered_pps": [5e7],
            "switch_us": 16016.0,
        },
    ],
    "policy_report": {"policy": "fifo", "switches": 10},
}


def test_the_report_says_what_auto_chose_why_and_what_it_did_later():
    text = "\n".join(auto_decision_lines(REPORT))
    assert "auto (efficiency): runs unis" in text
    assert "auto at the start: nfvnice: efficiency: nfvnice is predicted" in text
    assert "nfvnice*" in text  # the chosen row of the predictions
    assert "cannot run here: an external NF" in text
    assert "would choose rtc" in text and "not applied: it needs a restart" in text
    assert "switched nfvnice -> unis in 16016 us" in text
    assert "offered 50 Mpps" in text


def test_switches_are_explained_at_the_chosen_modules_policy():
    assert switch_policy({"name": "auto", "report": REPORT}) == "fifo"
    assert switch_policy({"name": "coop", "report": {"policy": "fifo"}}) == "fifo"
    assert switch_policy({"name": "rtc", "report": {}}) is None


def test_a_choice_per_core_names_each_cores_policy():
    start = {
        "policy": "per_core",
        "core_policies": {"1": "unis", "2": "rtc"},
        "reason": "latency: each core its own policy (core 1 unis, core 2 rtc) is predicted 20 us a packet",
        "t_s": 0.0,
        "measured": False,
        "predictions": [
            prediction("hybrid", 0.2),
            dict(prediction("per_core", 0.2), core_policies={"1": "unis", "2": "rtc"}),
        ],
    }
    report = {"objective": "latency", "policy": "per_core", "core_policies": {"1": "unis", "2": "rtc"}}
    text = "\n".join(auto_decision_lines(dict(report, decisions=[start])))
    assert "auto (latency): runs per_core (core 1 unis, core 2 rtc)" in text
    assert "auto at the start: per_core (core 1 unis, core 2 rtc): latency: each core its own policy" in text
    assert "per_core (core 1 unis, core 2 rtc)*" in text  # the chosen row of the predictions


def test_a_live_switch_to_a_policy_per_core_names_each_cores_policy():
    start = {"policy": "hybrid", "reason": "latency: hybrid", "t_s": 0.0, "measured": False, "predictions": []}
    switch = {
        "t_s": 4.4,
        "measured": True,
        "offered_pps": [20000.0, 20000.0],
        "applied": True,
        "relayout": True,
        "from": "hybrid",
        "policy": "per_core",
        "core_policies": {"1": "unis", "2": "rtc"},
        "reason": "latency: at the measured rates per_core (core 1 unis, core 2 rtc) is predicted better",
    }
    report = {"objective": "latency", "policy": "per_core", "core_policies": {"1": "unis", "2": "rtc"}}
    text = "\n".join(auto_decision_lines(dict(report, decisions=[start, switch])))
    assert "switched hybrid -> per_core (core 1 unis, core 2 rtc) re-laying the NFs out" in text, text
