"""The Python API on real runs: tandem.run and tandem.compare return typed results with exact accounting."""

from __future__ import annotations

import yaml

import tandem
from conftest import BASE_SPEC, requires_root

pytestmark = requires_root


def test_run_returns_typed_results(machine_before):
    events = []
    outcome = tandem.run(yaml.safe_load(BASE_SPEC), "rtc", 0.5, on_event=events.append)
    assert outcome.ok, outcome.error
    results = outcome.results
    assert isinstance(results, tandem.RunResults)
    assert results.scheduler.name == "rtc"
    chain = results.chain("c")
    assert chain.accounting_exact and results.accounting.exact
    assert chain.generated == chain.delivered + chain.dropped.total + chain.in_flight.total
    assert chain.window.delivered_mpps > 0 and results.delivered_mpps == chain.window.delivered_mpps
    assert [nf.name for nf in results.nfs] == ["a", "b", "c3"]
    assert any(e["event"] == "progress" for e in events)
    assert not any("metrics" in e for e in events)  # snapshots only when metrics are served


def test_compare_returns_each_schedulers_runs_and_medians(machine_before):
    comparison = tandem.compare(yaml.safe_load(BASE_SPEC), ["coop", "rtc"], repeat=1, duration=0.5)
    assert isinstance(comparison, tandem.Comparison)
    assert comparison.exit_status == 0
    for name in ("coop", "rtc"):
        entry = comparison.schedulers[name]
        assert len(entry.runs) == len(entry.results) == 1
        assert entry.runs[0].accounting_exact
        assert comparison.median(name, "delivered_mpps") == entry.runs[0].delivered_mpps > 0
    # The second ceiling: rtc once at each batch size the rings hold; the best of them, and its batch.
    best = comparison.ceilings["best_rtc"]
    assert sorted(best["by_batch"]) == [32, 64, 128, 256, 512, 1024]
    assert best["mpps"] == max(best["by_batch"].values()) > 0 and best["by_batch"][best["batch"]] == best["mpps"]
