"""The machine resources the data plane declares are exactly those the control plane can provide, and a resource
it does not know is a clear setup error, not a run without it."""

import pytest

from controlplane.errors import SetupError
from controlplane.machine import resources
from controlplane.spec import catalog
from controlplane.spec.deployment import run_config
from controlplane.spec.loading import load_spec


def test_every_declared_resource_has_one_provider_and_no_provider_is_stale():
    declared = {resource["name"] for resource in catalog.catalog()["machine_resources"]}
    assert declared == set(resources.PROVIDERS)
    assert all(resource["what"] for resource in catalog.catalog()["machine_resources"])


def test_an_unknown_resource_is_refused_before_anything_is_changed():
    with pytest.raises(SetupError, match="machine resource 'hyperthreads_off'"):
        resources.provide(None, {"hyperthreads_off": True}, resources.RunPlace("r", {}, []))


def test_a_run_needs_only_what_its_scheduler_and_probes_name(tmp_path):
    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(
        "name: t\nscheduler: {name: unis, options: {backend: freezer}}\nchains:\n  - name: c\n    nfs:\n"
        "      - {name: a, type: macswap, core: 1, cost_cycles: 80}\n"
    )
    needs = catalog.check(run_config(load_spec(spec_file)), str(spec_file))["requirements"]
    assert needs == {"cycle_costs": True, "cgroup_v2_dir": True}
    spec_file.write_text(
        spec_file.read_text().replace("unis, options: {backend: freezer}", "rr, options: {timeslice_ms: 7}")
    )
    assert catalog.check(run_config(load_spec(spec_file)), str(spec_file))["requirements"] == {
        "rt_unthrottled": True,
        "rr_timeslice_ms": 7,
    }
