"""HTTP traffic through the μNFs that read requests: validate_url drops the attack flows' packets and nothing else,
count_url counts only requests that got past it, and every packet is accounted for."""

from __future__ import annotations

import json

from conftest import requires_root, tandem
from controlplane.spec.http_traffic import ATTACK_URLS, DEFAULT_URLS

pytestmark = requires_root

SPEC = """\
name: http
duration: 1
warmup: 0.2
# 50 kpps is a small share of what three light NFs on one core process on any host we run: nothing should queue.
traffic: {rate: 50 kpps, flows: 16, http: {malicious: 0.25}}
scheduler: coop
chains:
  - name: web
    nfs:
      - {name: check, type: checkip, core: 1}
      - {name: waf, type: validate_url, core: 1}
      - {name: count, type: count_url, core: 1}
"""


def test_validate_url_drops_exactly_the_attack_flows_and_count_url_sees_the_rest(write_spec, tmp_path, machine_before):
    out = tmp_path / "results.json"
    result = tandem("run", str(write_spec(SPEC)), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"], results["accounting"]
    chain = results["chains"][0]
    assert chain["generated"] == chain["delivered"] + chain["dropped"]["total"] + chain["in_flight"]["total"]
    nfs = {nf["name"]: nf for nf in results["nfs"]}
    check, waf, count = nfs["check"], nfs["waf"], nfs["count"]
    assert check["packets_dropped"] == 0  # the generator's requests are valid IPv4
    assert waf["report"]["requests_checked"] == waf["packets_in"] > 0 and waf["report"]["not_http"] == 0
    # Flows cycle in order and the first 4 of 16 carry attacks, so a quarter of any run of consecutive packets is
    # attacks, to within one cycle of flows; packets lost before the waf (none expected) widen that by their number.
    lost_before = chain["dropped"]["rings"]["web:entry"] + chain["dropped"]["rings"].get("web:check->waf", 0)
    assert abs(waf["packets_dropped"] - waf["packets_in"] / 4) <= 16 + lost_before, (waf, chain["dropped"])
    # What got past the waf is exactly the benign mix: every attack URL was caught.
    counted = {entry["url"]: entry["requests"] for entry in count["report"]["top"]}
    assert not set(counted) & set(ATTACK_URLS)
    assert set(counted) <= set(DEFAULT_URLS)
    assert count["report"]["not_http"] == 0 and count["report"]["untracked_requests"] == 0
    assert count["packets_dropped"] == 0


def test_an_http_traffic_with_a_udp_protocol_or_a_size_is_refused_naming_the_field(write_spec):
    bad = SPEC.replace("http: {malicious: 0.25}", "size: 128, http: {malicious: 0.25}")
    result = tandem("run", str(write_spec(bad)), "--quiet")
    assert result.returncode == 2
    assert (
        "traffic.size" in result.stderr and "follow the requests" in result.stderr and "Traceback" not in result.stderr
    )


def test_the_cycle_estimator_probes_an_http_nf_with_its_chains_requests(
    write_spec, tmp_path, monkeypatch, machine_before
):
    # What validate_url costs is what it costs to parse and match requests: probes of template frames of 64 B
    # would time its "not HTTP" exit. The probes send the chain's own requests, and the estimate is cached apart
    # from one made with other frames.
    from controlplane.planning import profile
    from controlplane.spec.deployment import run_config
    from controlplane.spec.loading import load_spec

    monkeypatch.setenv("TANDEM_CACHE_DIR", str(tmp_path / "cache"))
    spec_path = write_spec(SPEC)
    config = run_config(load_spec(str(spec_path)))
    waf = config["chains"][0]["nfs"][1]
    estimate, results = profile.estimator_run(profile.estimate_config(waf, config), waf, str(spec_path))
    report = results["nfs"][0]["report"]
    assert report["requests_checked"] > 0 and report["not_http"] == 0, report
    assert estimate["complete"]
    plain = dict(
        config,
        chains=[dict(config["chains"][0], traffic={"rate_pps": 0, "sizes": [[64, 1]], "flows": 16, "protocol": "udp"})],
    )
    assert profile.cost_key(waf, config) != profile.cost_key(waf, plain) == profile.cost_key(waf)
