"""A chain as a graph: a labelled fan-out after an HTTP classifier and a join, under every scheduler (one `compare`),
with exact accounting, every delivered packet on a path of the graph, and each way taking what its label says."""
from __future__ import annotations

import json

from conftest import GRAPH_SPEC, requires_root, tandem

pytestmark = requires_root

SCHEDULERS = ["coop", "rtc", "unis", "nfvnice", "bubble"]


def test_a_labelled_fan_out_and_a_join_run_under_every_scheduler(write_spec, tmp_path, machine_before):
    out = tmp_path / "comparison.json"
    result = tandem("compare", str(write_spec(GRAPH_SPEC)), "--schedulers", ",".join(SCHEDULERS), "--repeat", "1", "--json", str(out),
                    "--quiet", timeout=600)
    assert result.returncode == 0, result.stderr
    comparison = json.loads(out.read_text())
    for scheduler in SCHEDULERS:
        [results] = comparison["schedulers"][scheduler]["results"]
        where = f"{scheduler}: {results['chains'][0]['dropped']}"
        assert results["accounting"]["exact"], (scheduler, results["accounting"])
        chain = results["chains"][0]
        assert chain["hop_errors"] == 0, where
        assert chain["generated"] == chain["delivered"] + chain["dropped"]["total"] + chain["in_flight"]["total"], where
        nfs = {nf["name"]: nf for nf in results["nfs"]}
        classify, validate, count, forward = (nfs[name] for name in ("classify", "validate", "count", "forward"))
        labelled = classify["report"]
        assert labelled["http"] + labelled["other"] == classify["packets_in"] > 0, where
        # Flows cycle in order, so a quarter of any run of consecutive packets are bare segments, to within one cycle.
        assert abs(labelled["other"] - classify["packets_in"] / 4) <= 16, (scheduler, labelled)
        # Each way got what its label says: only requests reached the validator, and the forwarder took both ways.
        assert validate["report"]["not_http"] == 0 and validate["report"]["requests_checked"] == validate["packets_in"], where
        rings = chain["dropped"]["rings"]
        assert validate["packets_in"] + rings["web:classify->validate"] + chain["in_flight"]["total"] >= labelled["http"], where
        assert forward["packets_in"] <= labelled["other"] + count["packets_out"], where
        # A third of the requests are attacks: the validator dropped them (within a cycle of flows).
        assert abs(validate["packets_dropped"] - validate["packets_in"] / 3) <= 16, (scheduler, validate)
        assert count["report"]["not_http"] == 0, where
        assert chain["dropped"]["label_misses"] == {}, where


def test_a_chain_of_64_nfs_runs_with_every_hop_checked(write_spec, tmp_path, machine_before):
    # UNiS and Bubble study long chains; the hop record holds 64 NFs. rtc runs them all in one process.
    nfs = "\n".join(f"      - {{name: n{i}, type: macswap, core: 1}}" for i in range(64))
    spec = f"name: long\nduration: 1\nwarmup: 0.2\ntraffic: {{rate: 50 kpps, flows: 16}}\nscheduler: rtc\nchains:\n  - name: long\n    nfs:\n{nfs}\n"
    out = tmp_path / "results.json"
    result = tandem("run", str(write_spec(spec)), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    chain = results["chains"][0]
    assert results["accounting"]["exact"] and chain["delivered"] > 0, results["accounting"]
    assert chain["hop_errors"] == 0
    assert len(results["nfs"]) == 64 and all(nf["packets_in"] > 0 for nf in results["nfs"])
