"""The Python API on real runs: tandem.run and tandem.compare return typed results with exact accounting."""

from __future__ import annotations

import csv
import io
import statistics

import yaml

import tandem
from conftest import BASE_SPEC, requires_root
from controlplane.results.comparison_report import comparison_csv

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
    comparison = tandem.compare(yaml.safe_load(BASE_SPEC), ["coop", "rtc"], repeat=2, duration=0.5)
    assert isinstance(comparison, tandem.Comparison)
    assert comparison.exit_status == 0
    for name in ("coop", "rtc"):
        entry = comparison.schedulers[name]
        assert len(entry.runs) == len(entry.results) == 2
        assert all(run.accounting_exact for run in entry.runs)
        rates = [run.delivered_mpps for run in entry.runs]
        assert comparison.median(name, "delivered_mpps") == statistics.median(rates) > 0
        # Rounds, each run against rtc's of the same round, and how far the runs spread (flagged over 1.5x).
        assert [run.round for run in entry.runs] == [1, 2]
        rtc = comparison.schedulers["rtc"].runs
        assert [run.vs_rtc for run in entry.runs] == [
            r.delivered_mpps / t.delivered_mpps for r, t in zip(entry.runs, rtc, strict=True)
        ]
        assert comparison.median(name, "vs_rtc") == statistics.median(run.vs_rtc for run in entry.runs)
        assert entry.spread == max(rates) / min(rates) and entry.noisy == (entry.spread > 1.5)
    assert comparison.median("rtc", "vs_rtc") == 1.0
    # The second ceiling: rtc at each batch size the rings hold, once a round; the best of the batches' medians.
    best = comparison.ceilings["best_rtc"]
    assert sorted(best["by_batch"]) == [32, 64, 128, 256, 512, 1024]
    assert all(len(runs) == 2 for runs in best["runs_by_batch"].values())
    assert best["by_batch"] == {batch: statistics.median(runs) for batch, runs in best["runs_by_batch"].items()}
    assert best["mpps"] == max(best["by_batch"].values()) > 0 and best["by_batch"][best["batch"]] == best["mpps"]
    assert all(run.vs_best_rtc is not None for run in comparison.schedulers["coop"].runs)
    # What --json and --csv write carry the same fields.
    written = comparison.as_json()
    assert {"spread", "noisy"} <= set(written["schedulers"]["coop"])
    assert {"round", "vs_rtc", "vs_best_rtc"} <= set(written["schedulers"]["coop"]["runs"][0])
    rows = list(csv.DictReader(io.StringIO(comparison_csv(written))))
    assert len(rows) == 2 * 2 + 6 * 2 and {"round", "vs_rtc", "vs_best_rtc", "spread", "noisy"} <= set(rows[0])
