"""An SFC request runs as it is: composed into its μNF graph, with exact accounting, every packet on the path its
labels allow, the attacks dropped by the one URL validator left, and every NF process stopping by itself."""
from __future__ import annotations

import json

from conftest import REPO, requires_root, tandem

pytestmark = requires_root


def test_the_papers_sfc_runs_composed_under_coop(tmp_path, machine_before):
    # Seven μNF processes on one core under coop: the chain where workers used to overrun the 5 s stop while
    # freeing their ACL contexts and hash tables at once.
    out = tmp_path / "r.json"
    result = tandem("run", str(REPO / "examples" / "web-sfc.yaml"), "--duration", "1", "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"], results["accounting"]
    chain = results["chains"][0]
    assert chain["hop_errors"] == 0 and chain["generated"] == chain["delivered"] + chain["dropped"]["total"] + chain["in_flight"]["total"]
    nfs = {nf["name"]: nf for nf in results["nfs"]}
    assert set(nfs) == {"edge.check", "edge.filter", "monitor.flows", "monitor.classify", "monitor.urls", "appfw.validate", "tx"}
    # A quarter of the 64 flows attack and a quarter carry no request (examples/web-sfc.yaml): the validator sees
    # only requests and drops a third of them, to within one cycle of flows.
    validate, classify = nfs["appfw.validate"], nfs["monitor.classify"]["report"]
    assert validate["report"]["not_http"] == 0 and validate["packets_in"] == classify["http"] > 0
    assert abs(validate["packets_dropped"] - validate["packets_in"] / 3) <= 64, validate
    assert nfs["tx"]["packets_in"] == classify["other"]
    assert [w["exit"] for w in results["workers"]] == ["exited with status 0"] * 7
    assert not results["warnings"], results["warnings"]
