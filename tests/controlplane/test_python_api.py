"""The Python API without a run: `from tandem import ...` works, specs load from files, dicts and models, bad input
raises the errors the CLI turns into exit 2, and the results models read what the data plane writes."""

from __future__ import annotations

import json

import pytest
import yaml

import tandem
from conftest import BASE_SPEC, MIXED_SPEC, REPO
from controlplane.api import _accepting
from controlplane.errors import SpecError
from controlplane.spec.loading import spec_from_document


def test_the_documented_names_are_there():
    from tandem import Comparison, RunOutcome, RunResults, Spec, compare, load_spec, run  # noqa: F401

    assert set(tandem.__all__) >= {"Spec", "run", "compare", "load_spec", "RunResults", "Comparison"}


def test_a_spec_loads_from_a_file_a_dict_and_a_model():
    from_file = tandem.load_spec(REPO / "examples" / "light-chain.yaml")
    from_dict = tandem.load_spec(yaml.safe_load(BASE_SPEC))
    assert isinstance(from_file, tandem.Spec) and isinstance(from_dict, tandem.Spec)
    assert [nf.name for nf in from_dict.chains[0].nfs] == ["a", "b", "c3"]
    assert tandem.load_spec(from_dict) is from_dict


def test_an_sfc_request_is_composed_from_a_file_or_a_dict():
    path = REPO / "examples" / "web-sfc.yaml"
    from_file = tandem.load_spec(path)
    from_dict = tandem.load_spec(yaml.safe_load(path.read_text()))
    assert from_file.chains[0].graph is not None
    assert len(from_dict.chains[0].graph.nodes) == len(from_file.chains[0].graph.nodes) == 7


def test_a_bad_dict_names_the_field():
    document = yaml.safe_load(BASE_SPEC)
    document["chains"][0]["nfs"][0]["type"] = "no_such_nf"
    document["duration"] = -1
    with pytest.raises(SpecError) as error:
        tandem.load_spec(document)
    assert error.value.source == "<dict>"
    assert any(path == "duration" for path, _ in error.value.problems), error.value.problems


def test_an_unknown_scheduler_is_refused_before_anything_runs():
    with pytest.raises(SpecError, match="unknown scheduler 'nope'"):
        tandem.run(yaml.safe_load(BASE_SPEC), scheduler="nope")
    with pytest.raises(SpecError, match="unknown scheduler 'nope'"):
        tandem.compare(yaml.safe_load(BASE_SPEC), ["coop", "nope"])


def test_a_named_scheduler_that_cannot_run_the_spec_is_refused_before_anything_runs(capsys):
    # cfs could run it and comes first: the refusal must come before its runs, not after them.
    with pytest.raises(SpecError, match=r"chains\[0\]\.io: .*which coop cannot schedule"):
        tandem.compare(yaml.safe_load(MIXED_SPEC), ["cfs", "coop"])
    spec = spec_from_document(yaml.safe_load(MIXED_SPEC), "mixed.yaml")
    assert _accepting(spec, "mixed.yaml", ["cfs", "coop", "scc"], named=False) == ["cfs", "scc"]  # the default list
    assert "leaving out coop, which cannot run this spec" in capsys.readouterr().err
    with pytest.raises(SpecError, match="which rtc cannot schedule"):
        _accepting(spec, "mixed.yaml", ["rtc"], named=False)  # none left


def test_the_results_model_checks_what_it_types_and_keeps_the_rest():
    results = json.loads((REPO / "tests" / "controlplane" / "data" / "run-results.json").read_text())
    # A kernel without schedstat: its counters are absent, and must stay so (the report tells absent from zero).
    for nf in results["nfs"]:
        del nf["os"]["cpu_share"], nf["os"]["runnable_wait_share"]
        nf["os"]["unavailable"] = ["cpu_share", "runnable_wait_share"]
    model = tandem.RunResults.model_validate(results)
    assert model.chain("light").latency_us.p99 == results["chains"][0]["latency_us"]["p99"]
    assert model.delivered_mpps == pytest.approx(sum(c["window"]["delivered_mpps"] for c in results["chains"]))
    assert model.nfs[0].report == results["nfs"][0]["report"]
    assert model.as_json() == results  # written back as read: extras kept, nothing added
    with pytest.raises(KeyError, match="no chain 'other' \\(chains: light\\)"):
        model.chain("other")
    broken = json.loads(json.dumps(results))
    broken["chains"][0]["delivered"] = "many"
    with pytest.raises(ValueError, match="chains.0.delivered"):
        tandem.RunResults.model_validate(broken)
