"""A comparison's rounds on synthetic runs: the noise flag, ratios inside a round, the best-rtc sweep interleaved with
the schedulers and its medians, and the fields the table, CSV and JSON carry."""

from __future__ import annotations

import csv
import io
from types import SimpleNamespace

import yaml

from conftest import BASE_SPEC
from controlplane.api import load_spec
from controlplane.experiment import compare as compare_module
from controlplane.results.comparison_report import CSV_COLUMNS, comparison_csv, comparison_report
from controlplane.results.comparison_rounds import NOISY_SPREAD, noisy, spread, summarise_rounds, sweep_summary
from controlplane.results.model import Comparison


def summary(mpps: float | None, round_: int | None = None) -> dict:
    run = {
        "delivered_mpps": mpps,
        "offered_mpps": 30.0,
        "p50_us": 2.0,
        "p99_us": 4.0,
        "dropped": 0,
        "context_switches_per_s": 10.0,
        "accounting_exact": True,
        "hop_errors": 0,
        "entry_nf_cycles_per_packet": None,
        "compute_bound_mpps": None,
    }
    return run | ({"round": round_} if round_ is not None else {})


def comparison(rates: dict[str, list[float]], best: dict | None = None) -> dict:
    """A comparison of runs with these delivered rates, round by round, summarised as compare() summarises."""
    document = {
        "spec_name": "t",
        "spec": "t.yaml",
        "machine": "m",
        "repeat": max(len(r) for r in rates.values()),
        "duration_s": 1.0,
        "warmup_s": 0.3,
        "schedulers": {
            name: {"runs": [summary(m, i + 1) for i, m in enumerate(mpps)], "results": []}
            for name, mpps in rates.items()
        },
    }
    if best is not None:
        document["ceilings"] = {"best_rtc": best}
    compare_module.summarise(document)
    return document


def test_runs_more_than_one_and_a_half_times_apart_are_noisy_and_not_at_1_4():
    assert NOISY_SPREAD == 1.5
    assert spread([10.0, 14.0, 12.0]) == 1.4 and not noisy([10.0, 14.0, 12.0])
    assert noisy([10.0, 15.1, 12.0]) and not noisy([10.0, 15.0])
    assert spread([3.0]) is None and not noisy([3.0, None])  # one run: nothing to disagree with
    assert spread([0.0, 2.0]) is None and noisy([0.0, 2.0])  # one run delivered nothing, another did

    calm = comparison({"bubble": [10.0, 14.0, 12.0], "rtc": [11.0, 12.0, 13.0]})
    assert not calm["schedulers"]["bubble"]["noisy"] and calm["schedulers"]["bubble"]["spread"] == 1.4
    text = comparison_report(calm)
    assert "1.40x" in text and "!" not in text and "no ranking" not in text

    # The run of issue 33: the machine changed speed between rounds; rtc 1.9, 10.5, 26.3, bubble 2.4, 7.6, 23.8.
    noisy_one = comparison({"bubble": [2.4, 7.6, 23.8], "rtc": [1.9, 10.5, 26.3]})
    assert noisy_one["schedulers"]["rtc"]["noisy"] and noisy_one["schedulers"]["bubble"]["noisy"]
    text = comparison_report(noisy_one)
    (rtc_row,) = [line for line in text.splitlines() if line.startswith("rtc ")]
    assert "13.84x !" in rtc_row
    assert "! The runs of bubble (9.9x), rtc (13.8x) differ by more than 1.5x" in text
    assert "the medians (Mpps, vs bound) are no ranking; trust vs rtc and vs best rtc" in text


def test_ratios_to_rtc_pair_the_runs_of_one_round_and_their_median_is_reported():
    # rtc's first round failed: its runs are of rounds 2 and 3, so cfs's first run has nothing to pair with.
    document = comparison({"cfs": [1.0, 3.0, 2.0], "rtc": [4.0, 6.0, 8.0]})
    document["schedulers"]["rtc"]["runs"] = [summary(6.0, 2), summary(8.0, 3)]
    compare_module.summarise(document)
    cfs = document["schedulers"]["cfs"]
    assert [r["vs_rtc"] for r in cfs["runs"]] == [None, 0.5, 0.25]
    assert cfs["median"]["vs_rtc"] == 0.375  # the median of the ratios, not 2 / 7 (the ratio of the medians)
    assert cfs["median"]["delivered_mpps"] == 2.0
    assert "37.5%" in comparison_report(document)
    # Runs without rounds (a file from before rounds, or runs merged from several comparisons) pair by position.
    merged = {"schedulers": {"a": {"runs": [summary(1.0, 1), summary(2.0, 1)]}, "rtc": {"runs": [summary(4.0, 1)] * 2}}}
    summarise_rounds(merged)
    assert [r["vs_rtc"] for r in merged["schedulers"]["a"]["runs"]] == [0.25, 0.5]


def test_the_best_rtc_is_the_best_of_the_batches_medians_over_the_rounds():
    runs_by_batch = {32: [10.0, 30.0, 11.0], 256: [12.0, 13.0, 40.0], 1024: [None, 9.0, 9.5]}
    best = sweep_summary(runs_by_batch)
    # 256's median (13) beats 32's (11), whatever the single fastest run (40 at 256, 30 at 32); a failed run is left out
    assert best["by_batch"] == {32: 11.0, 256: 13.0, 1024: 9.25}
    assert (best["mpps"], best["batch"]) == (13.0, 256)
    assert best["noisy"] and round(best["spread"], 2) == 3.33
    # vs best rtc pairs each run with the best batch's run of the same round.
    document = comparison({"bubble": [6.0, 26.0, 20.0]}, best | {"runs_by_batch": runs_by_batch})
    assert [r["vs_best_rtc"] for r in document["schedulers"]["bubble"]["runs"]] == [0.5, 2.0, 0.5]
    assert document["schedulers"]["bubble"]["median"]["vs_best_rtc"] == 0.5
    text = comparison_report(document)
    assert "13.00 Mpps at batch 256 (median of 3 runs each, in the same rounds)" in text
    assert "rtc batch 256 (3.3x)" in text  # the ceiling's own noise is said too


def test_compare_runs_every_scheduler_and_every_sweep_batch_once_a_round(monkeypatch):
    spec = load_spec(yaml.safe_load(BASE_SPEC))
    made = []
    speed = {1: 1.0, 2: 10.0}  # the machine ten times faster in round 2

    def fake_run(config, source, observe):
        made.append((config["scheduler"]["name"], config["burst"]))
        rate = {"coop": 2.0, "rtc": 4.0}[config["scheduler"]["name"]] * (1 + config["burst"] / 1024)
        round_ = 1 + (len(made) - 1) // 8  # 2 schedulers and 6 batch sizes a round
        return SimpleNamespace(results={"mpps": rate * speed[round_]}, exit_status=0, notes=[], error=None)

    monkeypatch.setattr(compare_module.pipeline, "run", fake_run)
    monkeypatch.setattr(compare_module, "run_summary", lambda results: summary(results["mpps"]))
    document, status = compare_module.compare(spec, "t.yaml", ["coop", "rtc"], 2, 0.5, quiet=True)
    assert status == 0
    one_round = [("coop", spec.burst), ("rtc", spec.burst)] + [("rtc", b) for b in compare_module.CEILING_BATCHES]
    assert made == one_round * 2
    best = document["ceilings"]["best_rtc"]
    assert list(best["runs_by_batch"]) == list(compare_module.CEILING_BATCHES)
    assert best["batch"] == 1024 and best["runs_by_batch"][1024] == [8.0, 80.0] and best["mpps"] == 44.0
    coop = document["schedulers"]["coop"]
    # 10x apart across rounds: noisy, yet its ratio to rtc is the same in both rounds.
    assert coop["noisy"] and coop["spread"] == 10.0
    assert [r["round"] for r in coop["runs"]] == [1, 2]
    assert coop["median"]["vs_rtc"] == 0.5 and coop["median"]["vs_best_rtc"] == (2 + 2 * 32 / 1024) / 8
    # What the API returns and --json writes: the model keeps the new fields.
    schedulers = {name: dict(entry, results=[]) for name, entry in document["schedulers"].items()}  # no full results
    typed = Comparison.model_validate(dict(document, schedulers=schedulers, exit_status=status))
    assert typed.noisy() == ["coop", "rtc"] and typed.median("coop", "vs_rtc") == 0.5
    written = typed.as_json()
    assert written["schedulers"]["coop"]["noisy"] is True and written["schedulers"]["coop"]["spread"] == 10.0
    assert written["schedulers"]["coop"]["runs"][1]["vs_rtc"] == 0.5
    # The CSV: a row per run with its round, ratios and the scheduler's spread, then the sweep's runs.
    rows = list(csv.DictReader(io.StringIO(comparison_csv(written))))
    assert list(rows[0]) == CSV_COLUMNS
    (coop_round_2,) = [r for r in rows if r["scheduler"] == "coop" and r["round"] == "2"]
    assert float(coop_round_2["vs_rtc"]) == 0.5 and coop_round_2["noisy"] == "True" and coop_round_2["spread"] == "10.0"
    sweep = [r for r in rows if r["scheduler"] == "rtc batch 1024"]
    assert [(r["round"], r["batch"], float(r["delivered_mpps"]), float(r["vs_rtc"])) for r in sweep] == [
        ("1", "1024", 8.0, 8.0 / (4 * (1 + spec.burst / 1024))),
        ("2", "1024", 80.0, 8.0 / (4 * (1 + spec.burst / 1024))),
    ]


def test_without_the_ceiling_runs_only_the_schedulers_run(monkeypatch):
    spec = load_spec(yaml.safe_load(BASE_SPEC))
    made = []

    def fake_run(config, source, observe):
        made.append(config["scheduler"]["name"])
        return SimpleNamespace(results={"mpps": 1.0}, exit_status=0, notes=[], error=None)

    monkeypatch.setattr(compare_module.pipeline, "run", fake_run)
    monkeypatch.setattr(compare_module, "run_summary", lambda results: summary(results["mpps"]))
    document, _ = compare_module.compare(spec, "t.yaml", ["coop", "rtc"], 3, 0.5, quiet=True, ceiling=False)
    assert made == ["coop", "rtc"] * 3 and "ceilings" not in document
    assert "32...1024 (not run)" in comparison_report(document)


def test_the_plot_draws_every_run_and_the_best_rtc_batchs(monkeypatch, tmp_path):
    import matplotlib.axes

    from controlplane.results.plot import plot_comparison

    dots = []
    scatter = matplotlib.axes.Axes.scatter
    monkeypatch.setattr(
        matplotlib.axes.Axes, "scatter", lambda axis, x, y, **kw: dots.extend(y) or scatter(axis, x, y, **kw)
    )
    runs_by_batch = {32: [3.0, 12.0, 27.0], 256: [2.5, 13.0, 30.0]}
    document = comparison(
        {"bubble": [2.4, 7.6, 23.8], "rtc": [1.9, 10.5, 26.3]},
        sweep_summary(runs_by_batch) | {"runs_by_batch": runs_by_batch},
    )
    plot_comparison(document, str(tmp_path / "c.png"))
    assert sorted(dots) == sorted([2.4, 7.6, 23.8, 1.9, 10.5, 26.3, 2.5, 13.0, 30.0])  # the best batch is 256
    assert (tmp_path / "c.png").stat().st_size > 0


def with_entry_costs(document: dict, costs: dict[str, list[float | None]]) -> dict:
    """The same comparison with these first-NF costs a run, summarised again."""
    for name, values in costs.items():
        for run, cost in zip(document["schedulers"][name]["runs"], values, strict=True):
            run["entry_nf_cycles_per_packet"] = cost
    compare_module.summarise(document)
    return document


def test_rounds_whose_runs_ran_in_different_modes_are_left_out_of_the_same_mode_ratio():
    # Round 2: rtc ran fast (60 cycles a packet for its first NF), unis slow (90): that ratio compares the host.
    document = with_entry_costs(
        comparison({"rtc": [10.0, 10.0, 8.0], "unis": [9.0, 6.0, 7.2]}),
        {"rtc": [60.0, 62.0, 88.0], "unis": [61.0, 90.0, 89.0]},
    )
    unis = document["schedulers"]["unis"]
    assert [r["slow_mode"] for r in unis["runs"]] == [False, True, True]
    assert unis["median"]["vs_rtc"] == 0.9  # median of 0.9, 0.6, 0.9
    assert unis["median"]["vs_rtc_same_mode"] == 0.9  # rounds 1 and 3 only
    assert "slow_mode" in Comparison.model_validate(document).schedulers["unis"].runs[0].model_dump()


def test_the_report_says_when_the_modes_moved_a_ratio_and_when_the_ratio_is_the_schedulers():
    document = with_entry_costs(
        comparison({"rtc": [10.0, 10.0, 10.0, 8.0], "unis": [9.0, 5.0, 5.0, 7.2], "coop": [9.5, 9.5, 9.5, 7.6]}),
        {"rtc": [60.0, 61.0, 62.0, 88.0], "unis": [61.0, 90.0, 91.0, 89.0], "coop": [60.0, 61.0, 60.0, 87.0]},
    )
    text = comparison_report(document)
    assert "~ Runs in the VM's slow mode" in text
    assert "rtc in round 4; unis in rounds 2, 3, 4; coop in round 4." in text
    assert "unis 70.0%, 90.0% over 2 of 4 rounds: the modes moved it +20 points" in text
    assert "coop 95.0%, 95.0% over 4 of 4 rounds: the scheduler's" in text


def test_each_scheduler_is_its_own_reference_and_one_that_ran_in_one_mode_says_nothing_of_modes():
    # rtc's first NF pays 15 cycles more than unis's in every round (as on our Intel guest): not a mode.
    document = with_entry_costs(
        comparison({"rtc": [10.0, 9.0], "unis": [9.0, 8.0]}), {"rtc": [75.0, 80.0], "unis": [60.0, None]}
    )
    assert [r["slow_mode"] for r in document["schedulers"]["rtc"]["runs"]] == [False, False]
    assert [r["slow_mode"] for r in document["schedulers"]["unis"]["runs"]] == [False, None]
    assert "slow mode" not in comparison_report(document)
