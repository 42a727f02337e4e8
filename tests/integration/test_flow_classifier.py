"""Two SFCs behind one Rx classifier (examples/two-sfcs.yaml): each flow reaches its own SFC's μNFs and no other
(the sink's label-aware hop check is the Tx check), unmatched packets are dropped and counted at the classifier,
and the accounting is exact; a rule or a label the classifier does not have exits 2 naming the field."""

from __future__ import annotations

import json

import yaml

from conftest import REPO, requires_root, tandem

pytestmark = requires_root

EXAMPLE = REPO / "examples" / "two-sfcs.yaml"


def test_two_sfcs_share_the_machine_with_each_flow_on_its_own_sfc(tmp_path, machine_before):
    out = tmp_path / "r.json"
    result = tandem("run", str(EXAMPLE), "--duration", "1", "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"], results["accounting"]
    [chain] = results["chains"]
    assert chain["hop_errors"] == 0
    assert chain["generated"] == chain["delivered"] + chain["dropped"]["total"] + chain["in_flight"]["total"]
    nfs = {nf["name"]: nf for nf in results["nfs"]}
    report = nfs["rx"]["report"]
    received = nfs["rx"]["packets_in"]
    # None is lost before the classifier on a quiet host; a stall of ~10 ms at the entry ring loses some (a host
    # that stalls a vCPU can), and each lost packet moves any count by at most one.
    lost_before = sum(chain["dropped"]["rings"].values())
    # The 64 flows cycle in order: 32 are web, 24 voice, 8 match nothing, to within one cycle of flows.
    for count, flows in ((report["sfcs"]["web"], 32), (report["sfcs"]["voice"], 24), (report["unmatched"], 8)):
        assert abs(count - received * flows / 64) <= 64 + lost_before, (count, flows, received, lost_before)
    assert nfs["rx"]["packets_dropped"] == report["unmatched"]
    assert chain["dropped"]["total"] == report["unmatched"] + lost_before, chain["dropped"]
    assert (
        nfs["web.fw"]["packets_in"] == report["sfcs"]["web"]
        and nfs["voice.ttl"]["packets_in"] == report["sfcs"]["voice"]
    )
    assert nfs["tx"]["packets_in"] == report["sfcs"]["web"] + report["sfcs"]["voice"]


def test_a_bad_rule_or_a_label_that_is_no_sfc_exits_2_naming_the_field(tmp_path):
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["chains"][0]["graph"]["nodes"][0]["args"]["rules"][1]["src_port"] = "2000-1000"
    bad_rule = tmp_path / "bad-rule.yaml"
    bad_rule.write_text(yaml.safe_dump(spec))
    result = tandem("validate", str(bad_rule))
    assert result.returncode == 2 and "chains[0].graph.nodes[0].args.rules[1].src_port" in result.stderr, result.stderr

    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["chains"][0]["graph"]["edges"][1]["label"] = "video"
    bad_label = tmp_path / "bad-label.yaml"
    bad_label.write_text(yaml.safe_dump(spec))
    result = tandem("validate", str(bad_label))
    assert result.returncode == 2, result.stderr
    assert "chains[0].graph.edges[1].label" in result.stderr and "gates: web, voice" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
