"""A bounded slice of the papers' promises as properties (bench/property_suite.py): two random workloads under rtc and
coop; the promises that do not depend on the machine's noise (exact accounting, no chain starved) hold on both, and
the ratio promise is judged (held or not, it is reported with its worst case)."""

from __future__ import annotations

from bench.property_suite import run_suite, summary
from conftest import requires_root

pytestmark = requires_root


def test_a_slice_of_the_property_suite_runs_and_keeps_the_noise_free_promises(machine_before):
    document = run_suite(workloads=2, seed=5, repeat=1, duration=0.5, schedulers=["rtc", "coop"])
    checked = [item for outcome in document["outcomes"] for item in outcome["promises"]]
    for item in checked:
        if item["promise"] in ("exact accounting", "no chain starved"):
            assert item["held"], (item, [outcome["workload"]["name"] for outcome in document["outcomes"]])
    assert any(item["promise"] == "coop >= 0.5 rtc" and item["value"] is not None for item in checked)
    rows, text = summary(document["outcomes"])
    assert {row[0] for row in rows} == {"rtc", "coop"} and "worst workload" in text
