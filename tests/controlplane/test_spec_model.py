"""The spec model: defaults, rates with units, size mixes and the run description given to the data plane."""

from conftest import GRAPH_SPEC, MIXED_SPEC
from controlplane.machine.kernel_links import kernel_links
from controlplane.spec.deployment import DATACENTER_MIX, run_config
from controlplane.spec.http_traffic import ATTACK_URLS
from controlplane.spec.loading import load_spec


def test_rates_with_units_and_inherited_traffic(write_spec):
    spec = load_spec(
        write_spec("""\
        traffic: {rate: 2.5 Mpps, size: datacenter, flows: 8}
        chains:
          - name: a
            nfs: [{name: x, type: macswap, core: 1}]
          - name: b
            traffic: {rate: 300 kpps, size: [{size: 64, weight: 3}, {size: 1500, weight: 1}], protocol: tcp}
            nfs: [{name: y, type: macswap, core: 1}]
        """)
    )
    config = run_config(spec)
    a, b = config["chains"]
    assert a["traffic"]["rate_pps"] == 2.5e6
    assert a["traffic"]["sizes"] == [[s, w] for s, w in DATACENTER_MIX]
    assert a["traffic"]["protocol"] == "udp"
    assert b["traffic"]["rate_pps"] == 300e3
    assert b["traffic"]["sizes"] == [[64, 3.0], [1500, 1.0]]
    assert b["traffic"]["flows"] == 8  # inherited
    assert b["traffic"]["protocol"] == "tcp"
    assert a["ring_capacity"] == 2048


def test_scheduler_override_keeps_options_only_for_the_same_scheduler(write_spec):
    spec = load_spec(
        write_spec("""\
        scheduler: {name: coop, options: {k: 16}}
        chains: [{name: a, nfs: [{name: x, type: macswap, core: 1}]}]
        """)
    )
    assert run_config(spec)["scheduler"] == {"name": "coop", "options": {"k": 16}}
    assert run_config(spec, "coop")["scheduler"]["options"] == {"k": 16}
    assert run_config(spec, "cfs")["scheduler"] == {"name": "cfs", "options": {}}
    assert run_config(spec, duration=2.5)["duration"] == 2.5


def test_max_rate_is_zero_for_the_generator(write_spec):
    spec = load_spec(write_spec("chains: [{name: a, nfs: [{name: x, type: macswap, core: 1}]}]\n"))
    assert run_config(spec)["chains"][0]["traffic"]["rate_pps"] == 0.0


def test_a_chain_offers_its_rate_or_its_steps_mean_on_average(write_spec):
    spec = load_spec(
        write_spec("""\
        traffic: {rate: 2 Mpps}
        chains:
          - {name: fixed, nfs: [{name: x, type: macswap, core: 1}]}
          - {name: stepped, traffic: {rate_steps: [0, 1 Mpps, 5 Mpps]}, nfs: [{name: y, type: macswap, core: 1}]}
          - {name: fast, traffic: {rate: max}, nfs: [{name: z, type: macswap, core: 1}]}
        """)
    )
    assert [c["traffic"]["mean_rate_pps"] for c in run_config(spec)["chains"]] == [2e6, 2e6, 0.0]


def test_http_traffic_gives_every_flow_a_url_and_the_first_ones_attacks(write_spec):
    spec = load_spec(
        write_spec("""\
        traffic: {rate: 1 Mpps, flows: 10, http: {urls: [/a, /b], malicious: 0.2}}
        chains: [{name: web, nfs: [{name: x, type: count_url, core: 1}]}]
        """)
    )
    traffic = run_config(spec)["chains"][0]["traffic"]
    assert traffic["protocol"] == "tcp"
    assert traffic["http_urls"][2:] == ["/a", "/b"] * 4
    assert all(url in ATTACK_URLS for url in traffic["http_urls"][:2])
    plain = load_spec(write_spec("chains: [{name: a, nfs: [{name: x, type: macswap, core: 1}]}]\n"))
    assert run_config(plain)["chains"][0]["traffic"]["http_urls"] == []


def test_http_traffic_can_give_a_share_of_flows_no_request(write_spec):
    spec = load_spec(
        write_spec("""\
        traffic: {rate: 1 Mpps, flows: 10, http: {urls: [/a], malicious: 0.2, other: 0.3}}
        chains: [{name: web, nfs: [{name: x, type: count_url, core: 1}]}]
        """)
    )
    urls = run_config(spec)["chains"][0]["traffic"]["http_urls"]
    assert all(url in ATTACK_URLS for url in urls[:2]) and urls[2:5] == ["", "", ""] and urls[5:] == ["/a"] * 5


def test_a_graph_goes_to_the_data_plane_in_topological_order_with_its_edges(write_spec):
    forward = "        - {name: forward, type: ttl, core: 1}\n"
    first = GRAPH_SPEC.replace(forward, "").replace(
        "      nodes:\n", "      nodes:\n" + forward
    )  # the join listed first
    chain = run_config(load_spec(write_spec(first)))["chains"][0]
    assert [nf["name"] for nf in chain["nfs"]] == ["classify", "validate", "count", "forward"]
    assert [nf["spec_path"] for nf in chain["nfs"]] == [f"chains[0].graph.nodes[{n}]" for n in (1, 2, 3, 0)]
    assert chain["edges"][0] == {
        "from": "classify",
        "to": "validate",
        "label": "http",
        "spec_path": "chains[0].graph.edges[0]",
    }
    assert "label" not in chain["edges"][2]
    line = run_config(load_spec(write_spec("chains: [{name: a, nfs: [{name: x, type: macswap, core: 1}]}]\n")))[
        "chains"
    ][0]
    assert "edges" not in line and line["nfs"][0]["spec_path"] == "chains[0].nfs[0]"


def test_each_nf_of_a_chain_with_kernel_io_nfs_says_its_io_and_the_veths_go_where_one_end_is_kernel(write_spec):
    mixed = run_config(load_spec(write_spec(MIXED_SPEC)))["chains"][0]
    assert mixed["io"] == {"kind": "kernel", "mux": 8, "link": "b2b"}
    assert [nf["io"] for nf in mixed["nfs"]] == ["kernel", "dpdk", "kernel"]
    assert kernel_links(mixed["nfs"]) == [True, True, True, True]  # entry, a->b, b->c3, exit
    flipped = run_config(
        load_spec(write_spec(MIXED_SPEC.replace("io: kernel\n", "io: dpdk\n").replace("io: dpdk}", "io: kernel}")))
    )
    assert [nf["io"] for nf in flipped["chains"][0]["nfs"]] == ["dpdk", "kernel", "dpdk"]
    assert kernel_links(flipped["chains"][0]["nfs"]) == [False, True, True, False]
    dpdk_only = run_config(load_spec(write_spec("chains: [{name: a, nfs: [{name: x, type: macswap, core: 1}]}]\n")))[
        "chains"
    ][0]
    assert "io" not in dpdk_only and "io" not in dpdk_only["nfs"][0]
