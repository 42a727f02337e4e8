"""A bounded fault soak (60 s; bench/fault_soak.py runs it for 10 minutes a scheduler): NFs killed and stopped, the
manager and the CLI SIGKILLed, Ctrl-C, under coop, unis, nfvnice and bubble; accounting stays exact, every fault is
reported as what it was, and nothing is left behind."""

from __future__ import annotations

import json
import sys

from conftest import REPO, requires_cpu_cgroup, requires_root, runnable

sys.path.insert(0, str(REPO / "bench"))
from fault_soak import FAULTS, SCHEDULERS, soak  # noqa: E402

pytestmark = requires_root


@requires_cpu_cgroup
def test_nfvnice_is_among_the_schedulers_soaked_where_a_cgroup_hierarchy_offers_cpu():
    # Where neither hierarchy offers cpu, the soak below leaves nfvnice out, and this case says why.
    assert "nfvnice" in runnable(SCHEDULERS)


def test_faults_at_random_moments_leave_exact_accounts_and_a_clean_machine(machine_before):
    outcome = soak(runnable(SCHEDULERS), seconds_each=15, seed=20261123, say=lambda text: None)
    runs, totals = outcome["runs"], outcome["totals"]
    problems = [(r["scheduler"], r["fault"], r["problems"], r["left"]) for r in runs if r["problems"] or r["left"]]
    assert not problems, problems
    # In full: pytest would cut a long record short, and the accounting is what tells why.
    assert totals["inexact"] == 0, json.dumps([r for r in runs if r.get("exact") is False], indent=1)
    # A run lasts 4-10 s, so 60 s hold at least one whole cycle of the faults, which covers every kind.
    assert len(runs) >= len(FAULTS) and {r["fault"] for r in runs} == set(FAULTS), [r["fault"] for r in runs]
    assert totals["runs_with_results"] > 0
