"""`serve --ready-for`: schedulers with the options a live switch will give them, read from the command line or a
Python caller's list, checked by the data plane before anything is measured, and what they need of the machine
merged with the run's own, one resource held apart by two refused."""

import pytest

from controlplane.errors import EXIT_BAD_INPUT, SpecError
from controlplane.experiment.pipeline import ready_requirements
from controlplane.spec import catalog
from controlplane.spec.deployment import run_config
from controlplane.spec.loading import load_spec
from controlplane.spec.ready_for import parse_ready_for, ready_for_schedulers, shown

SPEC = "name: t\nscheduler: coop\nchains:\n  - name: c\n    nfs:\n      - {name: a, type: macswap, core: 1}\n"


def test_each_scheduler_takes_the_options_that_follow_its_name():
    assert parse_ready_for("unis:backend=freezer,nfvnice:cost=blackbox,period_us=200, auto") == [
        {"name": "unis", "options": {"backend": "freezer"}},
        {"name": "nfvnice", "options": {"cost": "blackbox", "period_us": 200}},  # a YAML value, as ctl --option
        {"name": "auto", "options": {}},
    ]
    assert parse_ready_for("") == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("cost=blackbox,nfvnice", "an option before any scheduler's name"),
        (":cost=blackbox", "give the scheduler's name before its options"),
        ("nfvnice:cost", "'cost' (of nfvnice) is not KEY=VALUE"),
        ("nfvnice:cost=[", "--ready-for nfvnice:cost"),  # its malformed YAML value, named
    ],
)
def test_a_malformed_list_is_refused_naming_the_flag(text, said):
    with pytest.raises(SpecError) as refused:
        parse_ready_for(text)
    assert refused.value.exit_status == EXIT_BAD_INPUT and said in str(refused.value)
    assert str(refused.value).startswith("--ready-for")


def test_a_python_caller_gives_names_the_flags_form_or_mappings():
    ready = ready_for_schedulers(["unis", "scc:policy=rr", {"name": "nfvnice", "options": {"cost": "blackbox"}}])
    assert [shown(scheduler) for scheduler in ready] == ["unis", "scc:policy=rr", "nfvnice:cost=blackbox"]
    with pytest.raises(SpecError, match=r"--ready-for: \[1\]\.name"):
        ready_for_schedulers(["unis", {"options": {}}])


@pytest.fixture
def config(tmp_path):
    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(SPEC)
    return run_config(load_spec(spec_file))


def test_what_a_scheduler_needs_follows_its_options(config):
    own = catalog.check(config, "s.yaml")["requirements"]
    by_default = ready_requirements(dict(config, ready_for=parse_ready_for("nfvnice")), "s.yaml", own)
    blackbox = ready_requirements(dict(config, ready_for=parse_ready_for("nfvnice:cost=blackbox")), "s.yaml", own)
    assert "cycle_costs" not in by_default and blackbox["cycle_costs"] is True  # its costs measured before traffic
    assert blackbox.keys() - {"cycle_costs"} == by_default.keys()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("nfvnice:cost=whitebox", "--ready-for: nfvnice:cost=whitebox: scheduler.cost: must be one of"),
        ("unis,nfvnice:costs=1", "--ready-for: nfvnice:costs=1: scheduler.costs: unknown argument"),
        (
            "scc:policy=rr,timeslice_ms=5,scc:policy=rr,timeslice_ms=10",
            "scc:policy=rr,timeslice_ms=10: needs rr_timeslice_ms 10, where scc:policy=rr,timeslice_ms=5 needs 5: "
            "the machine has one",
        ),
    ],
)
def test_options_the_data_plane_refuses_or_needs_the_machine_cannot_meet_together_are_errors(config, text, said):
    own = catalog.check(config, "s.yaml")["requirements"]
    with pytest.raises(SpecError) as refused:
        ready_requirements(dict(config, ready_for=parse_ready_for(text)), "s.yaml", own)
    assert said in str(refused.value)
