"""Bad specs get exit status 2 and one clear message naming the file and the field, never a traceback."""

import pytest
import yaml

from conftest import BASE_SPEC, GRAPH_SPEC, KERNEL_SPEC, MIXED_SPEC, PARALLEL_SPEC, REPO, tandem
from controlplane.errors import SpecError
from controlplane.sfc.schema import schema as spec_json_schema
from controlplane.spec import catalog
from controlplane.spec.loading import spec_from_document


def bad(spec_text: str, old: str, new: str) -> str:
    assert old in spec_text, old
    return spec_text.replace(old, new)


LAST_EDGE = "        - {from: count, to: forward}\n"

CASES = [
    (
        "unknown NF type",
        bad(BASE_SPEC, "type: macswap", "type: teleporter"),
        "chains[0].nfs[0].type",
        "unknown NF type 'teleporter'",
    ),
    (
        "unknown argument",
        bad(BASE_SPEC, "type: macswap, core: 1}", "type: cost, core: 1, args: {cylces: 5}}"),
        "chains[0].nfs[0].args.cylces",
        "unknown argument",
    ),
    (
        "argument out of range",
        bad(BASE_SPEC, "type: macswap, core: 1}", "type: drop, core: 1, args: {fraction: 2}}"),
        "chains[0].nfs[0].args.fraction",
        "between 0 and 1",
    ),
    (
        "bad firewall rule",
        bad(
            BASE_SPEC,
            "type: macswap, core: 1}",
            "type: firewall, core: 1, args: {rules: [{src: 10.0.0.0/40, action: deny}]}}",
        ),
        "chains[0].nfs[0].args.rules[0].src",
        "IPv4 or IPv6 address or prefix",
    ),
    (
        "core that does not exist",
        bad(BASE_SPEC, "type: ttl, core: 1", "type: ttl, core: 64"),
        "chains[0].nfs[1].core",
        "does not exist on this machine",
    ),
    (
        "control core for an NF",
        bad(BASE_SPEC, "type: checkip, core: 1", "type: checkip, core: 0"),
        "chains[0].nfs[2].core",
        "control core",
    ),
    ("duplicate NF names", bad(BASE_SPEC, "name: b,", "name: a,"), "chains[0].nfs[1].name", "duplicate NF name 'a'"),
    (
        "duplicate chain names",
        BASE_SPEC + "  - name: c\n    nfs: [{name: z, type: macswap, core: 1}]\n",
        "chains[1].name",
        "duplicate chain name",
    ),
    ("ring capacity not a power of two", BASE_SPEC + "ring_capacity: 1000\n", "ring_capacity", "power of two"),
    ("empty chain", BASE_SPEC + "  - name: empty\n    nfs: []\n", "chains[1].nfs", "is empty"),
    (
        "rate not a number",
        bad(BASE_SPEC, "rate: max", "rate: fast"),
        "traffic.rate",
        "'max', a number of packets per second",
    ),
    ("negative rate", bad(BASE_SPEC, "rate: max", "rate: -5"), "traffic.rate", "positive rate"),
    (
        "negative rate step",
        bad(BASE_SPEC, "rate: max", "rate: max, rate_steps: [1 Mpps, -5]"),
        "traffic.rate_steps",
        "step 1: must be a non-negative rate",
    ),
    (
        "zero step length",
        bad(BASE_SPEC, "rate: max", "rate_steps: [0, 1 Mpps], step_seconds: 0"),
        "traffic.step_seconds",
        "greater than 0",
    ),
    ("frame too small", bad(BASE_SPEC, "size: 64", "size: 20"), "traffic.size", "between 64 and 1518"),
    ("unknown field", BASE_SPEC + "colour: blue\n", "colour", "unknown field"),
    ("missing chains", "name: x\n", "chains", "is required"),
    (
        "unknown scheduler",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: magic"),
        "scheduler.name",
        "unknown scheduler 'magic'",
    ),
    (
        "bad scheduler option",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: coop, options: {k: -1}}"),
        "scheduler.k",
        "between 0 and",
    ),
    (
        "unis gamma zero",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: unis, options: {gamma: 0}}"),
        "scheduler.gamma",
        "must be in (0, 1]",
    ),
    (
        "unis gamma above one",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: unis, options: {gamma: 1.5}}"),
        "scheduler.gamma",
        "between 0 and 1",
    ),
    (
        "unis theta_min above capacity",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: unis, options: {theta_min: 5000}}"),
        "scheduler.theta_min",
        "below the capacity",
    ),
    (
        "unis theta_max above capacity",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: unis, options: {theta_max: 4096}}"),
        "scheduler.theta_max",
        "between 1 and the capacity",
    ),
    (
        "nfvnice watermarks out of order",
        bad(
            BASE_SPEC,
            "scheduler: coop",
            "scheduler: {name: nfvnice, options: {high_watermark: 0.5, low_watermark: 0.7}}",
        ),
        "scheduler.low_watermark",
        "must be below high_watermark",
    ),
    (
        "nfvnice watermark above capacity",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: nfvnice, options: {high_watermark: 1.5}}"),
        "scheduler.high_watermark",
        "between",
    ),
    (
        "negative NF weight",
        bad(BASE_SPEC, "type: macswap, core: 1}", "type: macswap, core: 1, weight: -1}"),
        "chains[0].nfs[0].weight",
        "greater than 0",
    ),
    (
        "NF weight not a number",
        bad(BASE_SPEC, "type: macswap, core: 1}", "type: macswap, core: 1, weight: high}"),
        "chains[0].nfs[0].weight",
        "valid number",
    ),
    (
        "zero chain weight",
        bad(BASE_SPEC, "  - name: c\n", "  - name: c\n    weight: 0\n"),
        "chains[0].weight",
        "greater than 0",
    ),
    (
        "unis unknown backend",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: unis, options: {backend: nice}}"),
        "scheduler.backend",
        "fifo",
    ),
    (
        "negative cycle cost",
        bad(BASE_SPEC, "type: macswap, core: 1}", "type: macswap, core: 1, cost_cycles: -3}"),
        "chains[0].nfs[0].cost_cycles",
        "greater than 0",
    ),
    (
        "bubble batch not a multiple of 16",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: bubble, options: {lower_batch: 40}}"),
        "scheduler.lower_batch",
        "multiple of 16",
    ),
    (
        "bubble batch bounds out of order",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: bubble, options: {lower_batch: 512, upper_batch: 256}}"),
        "scheduler.lower_batch",
        "must not exceed upper_batch",
    ),
    (
        "bubble real-time with spare workers",
        bad(
            BASE_SPEC,
            "scheduler: coop",
            "scheduler: {name: bubble, options: {policy: fifo, spare_workers_per_core: 1}}",
        ),
        "scheduler.policy",
        "spare_workers_per_core 0",
    ),
    (
        "rtc policy unknown",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: rtc, options: {policy: rr}}"),
        "scheduler.policy",
        "fifo",
    ),
    (
        "bubble alpha not above one",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: bubble, options: {alpha: 1}}"),
        "scheduler.alpha",
        "greater than 1",
    ),
    (
        "bubble beta not positive",
        bad(BASE_SPEC, "scheduler: coop", "scheduler: {name: bubble, options: {beta: 0}}"),
        "scheduler.beta",
        "greater than 0",
    ),
    (
        "bubble NF batch off the grid",
        bad(
            BASE_SPEC.replace("scheduler: coop", "scheduler: bubble"),
            "type: macswap, core: 1}",
            "type: macswap, core: 1, batch: 100}",
        ),
        "chains[0].nfs[0].batch",
        "multiple of 16",
    ),
    (
        "NF without a core",
        bad(BASE_SPEC, "{name: a, type: macswap, core: 1}", "{name: a, type: macswap}"),
        "chains[0].nfs[0].core",
        "placement: auto",
    ),
    (
        "placement on the control core",
        BASE_SPEC + "placement: auto\nplacement_cores: [0]\n",
        "placement_cores[0]",
        "control core",
    ),
    (
        "external NF binary missing",
        bad(BASE_SPEC, "type: macswap, core: 1}", "type: external, core: 1, args: {binary: /nonexistent/testpmd}}"),
        "chains[0].nfs[0].args.binary",
        "not an executable file",
    ),
    (
        "external NF under a worker-hosted scheduler",
        bad(
            BASE_SPEC.replace("scheduler: coop", "scheduler: rtc"),
            "type: macswap, core: 1}",
            "type: external, core: 1}",
        ),
        "chains[0].nfs[0].type",
        "cannot run under rtc",
    ),
    (
        "options for an unknown scheduler",
        BASE_SPEC + "scheduler_options: {magic: {k: 1}}\n",
        "scheduler_options",
        "unknown scheduler 'magic'",
    ),
    ("malformed YAML", "chains: [\n  {name: x\n", "", "malformed YAML: line"),
    ("not a mapping", "- just\n- a list\n", "", "must be a YAML mapping"),
    (
        "http with a frame size",
        bad(BASE_SPEC, "size: 64, flows: 16}", "size: 64, flows: 16, http: {malicious: 0.1}}"),
        "traffic.size",
        "frame sizes follow the requests",
    ),
    (
        "ipv6 in frames too small for its headers",
        bad(BASE_SPEC, "size: 64, flows: 16}", "size: 64, flows: 16, ip_version: 6, vlan: 10, protocol: tcp}"),
        "traffic.size",
        "a 64 B frame cannot hold IPv6, an 802.1Q tag and TCP headers: frames of 82 B at least",
    ),
    (
        "ip version 5",
        bad(BASE_SPEC, "size: 64, flows: 16}", "size: 128, flows: 16, ip_version: 5}"),
        "traffic.ip_version",
        "4 or 6",
    ),
    (
        "vlan id beyond 4094",
        bad(BASE_SPEC, "size: 64, flows: 16}", "size: 128, flows: 16, vlan: 4095}"),
        "traffic.vlan",
        "less than or equal to 4094",
    ),
    (
        "http over udp",
        bad(BASE_SPEC, "size: 64, flows: 16}", "flows: 16, protocol: udp, http: {}}"),
        "traffic.protocol",
        "http traffic is TCP",
    ),
    (
        "http URL without a slash",
        bad(BASE_SPEC, "size: 64, flows: 16}", "flows: 16, http: {urls: [index.html]}}"),
        "traffic.http.urls",
        "URL 0: must start with '/'",
    ),
    (
        "http URL with a space",
        bad(BASE_SPEC, "size: 64, flows: 16}", "flows: 16, http: {urls: ['/a b']}}"),
        "traffic.http.urls",
        "without spaces",
    ),
    (
        "http malicious share above 1",
        bad(BASE_SPEC, "size: 64, flows: 16}", "flows: 16, http: {malicious: 2}}"),
        "traffic.http.malicious",
        "less than or equal to 1",
    ),
    (
        "http with too many flows",
        bad(BASE_SPEC, "size: 64, flows: 16}", "flows: 100000, http: {}}"),
        "traffic.flows",
        "at most 65536 flows",
    ),
    (
        "graph edge to an unknown node",
        bad(GRAPH_SPEC, "{from: count, to: forward}", "{from: count, to: exit}"),
        "chains[0].graph.edges[3].to",
        "unknown node 'exit' (nodes: classify, validate, count, forward)",
    ),
    (
        "graph cycle",
        GRAPH_SPEC + "        - {from: forward, to: validate}\n",
        "chains[0].graph.edges[4]",
        "closes a cycle: validate -> count -> forward -> validate",
    ),
    (
        "graph edge to itself",
        GRAPH_SPEC + "        - {from: forward, to: forward}\n",
        "chains[0].graph.edges[4]",
        "to itself closes a cycle",
    ),
    (
        "graph edge given twice",
        GRAPH_SPEC + LAST_EDGE,
        "chains[0].graph.edges[4]",
        "a second edge from 'count' to 'forward'",
    ),
    (
        "graph with a second entry",
        bad(
            GRAPH_SPEC,
            "        - {name: forward,",
            "        - {name: lone, type: ttl, core: 1}\n        - {name: forward,",
        )
        + "        - {from: lone, to: forward}\n",
        "chains[0].graph.nodes[3]",
        "node 'lone' has no edge in, and neither has 'classify'",
    ),
    (
        "graph fan-out half labelled",
        bad(GRAPH_SPEC, "{from: classify, to: forward, label: other}", "{from: classify, to: forward}"),
        "chains[0].graph.edges[1]",
        "label this one too",
    ),
    (
        "parallel branch without an NF",
        bad(
            bad(GRAPH_SPEC, "{from: classify, to: forward, label: other}", "{from: classify, to: forward}"),
            ", label: http",
            "",
        ),
        "chains[0].graph.edges[1]",
        "needs at least one NF",
    ),
    (
        "parallel branches meeting at two nodes",
        bad(
            bad(
                PARALLEL_SPEC,
                "        - {name: forward,",
                "        - {name: other, type: ttl, core: 1}\n        - {name: forward,",
            ),
            "{from: swap, to: forward}",
            "{from: swap, to: other}\n        - {from: forward, to: other}",
        ),
        "chains[0].graph.nodes[0]",
        "the branches after 'check' meet at forward, other",
    ),
    (
        "parallel branch that forks again",
        bad(PARALLEL_SPEC, "{from: swap, to: forward}", "{from: swap, to: forward}\n        - {from: swap, to: urls}"),
        "chains[0].graph.nodes[3]",
        "node 'swap' is in a branch of the parallel group after 'check'",
    ),
    (
        "parallel branch that may drop",
        bad(PARALLEL_SPEC, "{name: swap, type: macswap, core: 1}", "{name: swap, type: ttl, core: 1}"),
        "chains[0].graph.nodes[3]",
        "may drop packets, so it cannot run in a parallel branch",
    ),
    (
        "parallel branches writing one field",
        bad(PARALLEL_SPEC, "{name: flows, type: counter, core: 1}", "{name: flows, type: macswap, core: 1}"),
        "chains[0].graph.nodes[3]",
        "'flows' and 'swap' are in parallel branches (after check) "
        "but one writes what the other reads or writes (eth_dst, eth_src)",
    ),
    (
        "graph label that is no gate",
        bad(GRAPH_SPEC, "label: other}", "label: others}"),
        "chains[0].graph.edges[1].label",
        "'others' is not a gate of http_classifier (gates: other, http)",
    ),
    (
        "graph gate without an edge",
        bad(GRAPH_SPEC, "        - {from: classify, to: forward, label: other}\n", ""),
        "chains[0].graph.nodes[0]",
        "gate 'other' of classify (http_classifier) has no edge",
    ),
    (
        "graph label on a one-output NF",
        bad(GRAPH_SPEC, "{from: count, to: forward}", "{from: count, to: forward, label: http}"),
        "chains[0].graph.edges[3].label",
        "has one output",
    ),
    (
        "graph and nfs both",
        bad(GRAPH_SPEC, "    graph:\n", "    nfs: [{name: q, type: ttl, core: 1}]\n    graph:\n"),
        "chains[0].graph",
        "not both",
    ),
    ("chain without NFs", "chains: [{name: bare}]\n", "chains[0].nfs", "is required"),
    (
        "chain longer than the hop record",
        BASE_SPEC
        + "  - name: long\n    nfs:\n"
        + "".join(f"      - {{name: n{i}, type: ttl, core: 1}}\n" for i in range(65)),
        "chains[1].nfs",
        "a chain has at most 64 NFs, got 65",
    ),
    (
        "graph node not on a core",
        bad(
            GRAPH_SPEC,
            "{name: validate, type: validate_url, core: 1}",
            "{name: validate, type: validate_url, core: 64}",
        ),
        "chains[0].graph.nodes[1].core",
        "does not exist",
    ),
    (
        "graph node of an unknown type",
        bad(GRAPH_SPEC, "type: ttl", "type: tll"),
        "chains[0].graph.nodes[3].type",
        "unknown NF type 'tll'",
    ),
    (
        "http shares above 1",
        bad(GRAPH_SPEC, "malicious: 0.25, other: 0.25", "malicious: 0.75, other: 0.5"),
        "traffic.http",
        "together at most 1",
    ),
    (
        "NF io unknown",
        bad(BASE_SPEC, "type: ttl, core: 1}", "type: ttl, core: 1, io: sockets}"),
        "chains[0].nfs[1].io",
        "'dpdk' or 'kernel'",
    ),
    (
        "mixed chain through a switch",
        bad(MIXED_SPEC, "link: b2b", "link: bridge"),
        "chains[0].link",
        "links them back to back (b2b)",
    ),
    (
        "mixed chain as a graph",
        bad(
            GRAPH_SPEC.replace("scheduler: coop", "scheduler: cfs"),
            "type: count_url, core: 1}",
            "type: count_url, core: 1, io: kernel}",
        ),
        "chains[0].graph.nodes[0]",
        "a chain with kernel-I/O NFs (io: kernel) is a line of NFs: classify has several edges",
    ),
    (
        "mixed chain under a ring scheduler",
        MIXED_SPEC.replace("scheduler: cfs", "scheduler: coop"),
        "chains[0].io",
        "has kernel-I/O NFs, which coop cannot schedule",
    ),
    (
        "scaling in a mixed chain",
        bad(
            MIXED_SPEC,
            "{name: c3, type: checkip, core: 1}",
            "{name: c3, type: checkip, core: 1, scale: {max_instances: 2}}",
        ),
        "chains[0].nfs[2].scale",
        "this chain has kernel-I/O NFs",
    ),
    (
        "mux on a chain without kernel NFs",
        bad(BASE_SPEC, "  - name: c\n", "  - name: c\n    mux: 8\n"),
        "chains[0].mux",
        "add io: kernel (to the chain or an NF)",
    ),
    (
        "validate_url pattern that does not compile",
        bad(BASE_SPEC, "type: macswap, core: 1}", "type: validate_url, core: 1, args: {patterns: ['(a)\\1']}}"),
        "chains[0].nfs[0].args.patterns[0]",
        "not a pattern Hyperscan compiles",
    ),
]


@pytest.mark.parametrize("label,text,field,message", CASES, ids=[c[0] for c in CASES])
def test_bad_spec_is_rejected_with_file_and_field(write_spec, label, text, field, message):
    path = write_spec(text)
    result = tandem("validate", str(path))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert str(path) in result.stderr
    if field:
        assert f": {field}: " in result.stderr, result.stderr
    assert message in result.stderr, result.stderr


def test_missing_spec_file_is_a_clear_error(tmp_path):
    result = tandem("validate", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2
    assert "cannot read the spec" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("operation", "what"),
    [(["args", "fw"], "the file of an NF's arguments"), (["add-chain"], "the file of a chain's fields")],
)
def test_a_live_changes_missing_file_is_named_for_what_it_was_to_hold(tmp_path, operation, what):
    # Read before any service is asked: no socket is needed to be told.
    result = tandem("ctl", *operation, str(tmp_path / "nope.yaml"), "--socket", str(tmp_path / "none.sock"))
    assert result.returncode == 2 and f"cannot read {what}: no such file" in result.stderr, result.stderr


def test_every_problem_is_reported_at_once(write_spec):
    text = bad(bad(BASE_SPEC, "type: ttl, core: 1", "type: ttl, core: 64"), "name: b,", "name: a,")
    result = tandem("validate", str(write_spec(text)))
    assert result.returncode == 2
    assert "chains[0].nfs[1].core" in result.stderr and "duplicate NF name" in result.stderr


def test_run_rejects_bad_spec_before_touching_the_machine(write_spec):
    result = tandem("run", str(write_spec(bad(BASE_SPEC, "type: macswap", "type: teleporter"))))
    assert result.returncode == 2
    assert "unknown NF type" in result.stderr


def test_unknown_scheduler_on_the_command_line(write_spec):
    result = tandem("compare", str(write_spec(BASE_SPEC)), "--schedulers", "cfs,warp")
    assert result.returncode == 2
    assert "--scheduler: unknown scheduler 'warp'" in result.stderr


@pytest.mark.parametrize(
    "args", [["run"], ["compare", "x.yaml", "--repeat", "0"], ["run", "x.yaml", "--duration", "soon"], ["fly"]]
)
def test_bad_command_lines_exit_2(args):
    result = tandem(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_every_example_validates():
    examples = sorted((REPO / "examples").glob("*.yaml"))
    assert len(examples) >= 4
    for example in examples:  # with every scheduler it gives options for (compare checks them too)
        result = tandem("validate", str(example.relative_to(REPO)))
        assert result.returncode == 0, result.stderr
        assert "valid" in result.stdout


def test_the_specs_limits_are_the_data_planes():
    # The data plane's sizes are set once, in its C++ constants, and read from its catalog: a spec one over each is
    # refused by field with the catalog's number, one at it passes, and the JSON Schema gives the same maximum.
    limits = catalog.catalog()["limits"]
    kernel = bad(KERNEL_SPEC, "mux: 8", "mux: MUX")
    for text, field, limit in [
        (BASE_SPEC.replace("duration: 1\n", "duration: 1\nburst: BURST\n"), "burst", "max_burst"),
        (BASE_SPEC.replace("duration: 1\n", "duration: 1\nprefetch: BURST\n"), "prefetch", "max_burst"),
        (kernel, "chains[0].mux", "max_kernel_mux"),
    ]:
        over = text.replace("BURST", str(limits[limit] + 1)).replace("MUX", str(limits[limit] + 1))
        assert (field, f"Input should be less than or equal to {limits[limit]}") in problems_of(over)
        at = text.replace("BURST", str(limits[limit])).replace("MUX", str(limits[limit]))
        assert not [p for p in problems_of(at) if p[0] == field]
    schema = spec_json_schema()
    assert schema["$defs"]["Spec"]["properties"]["burst"]["maximum"] == limits["max_burst"]


def problems_of(text: str) -> list[tuple[str, str]]:
    try:
        spec_from_document(yaml.safe_load(text), "spec.yaml")
    except SpecError as error:
        return error.problems
    return []


def test_more_processes_than_dpdk_has_lcore_ids_is_refused(write_spec):
    # 128 NFs in two chains of 64: as 128 worker processes and the manager they need 129 lcore ids, one more than
    # DPDK's 128; rtc runs them as one process, and 127 NFs as processes fit.
    def line(name: str, count: int) -> str:
        nfs = "".join(f"      - {{name: {name}{i}, type: cost, core: 1}}\n" for i in range(count))
        return f"  - name: {name}\n    nfs:\n{nfs}"

    head = "name: wide\nduration: 1\ntraffic: {rate: max}\nscheduler: cfs\nchains:\n"
    too_many = write_spec(head + line("a", 64) + line("b", 64), "wide.yaml")
    result = tandem("validate", str(too_many))
    assert result.returncode == 2, result.stderr
    assert ": chains: cfs would start 128 worker processes" in result.stderr, result.stderr
    assert "129 DPDK lcore ids" in result.stderr and "Traceback" not in result.stderr
    assert tandem("validate", str(too_many), "--scheduler", "rtc").returncode == 0
    assert tandem("validate", str(write_spec(head + line("a", 64) + line("b", 63), "fits.yaml"))).returncode == 0


@pytest.mark.parametrize(
    "args, said",
    [
        (["run", "SPEC", "--json", "/nonexistent/folder/r.json"], "--json: cannot write /nonexistent/folder/r.json"),
        (["compare", "SPEC", "--csv", "/nonexistent/folder/r.csv"], "--csv: cannot write /nonexistent/folder/r.csv"),
        (["compare", "SPEC", "--plot", "/tmp"], "--plot: cannot write /tmp: is a folder"),
        # A folder whose mode lets root write, which takes no file all the same.
        (["run", "SPEC", "--json", "/proc/r.json"], "--json: cannot write /proc/r.json: no such file or directory"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_the_run(write_spec, tmp_path, args, said):
    spec = write_spec(BASE_SPEC)
    result = tandem(*[str(spec) if arg == "SPEC" else arg for arg in args])
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert "generated" not in result.stdout  # no run took place


def test_a_metrics_address_is_checked_before_it_is_announced(write_spec):
    result = tandem("run", str(write_spec(BASE_SPEC)), "--metrics", ":99999")
    assert result.returncode == 2
    assert "serving" not in result.stderr and "from 1 to 65535" in result.stderr, result.stderr


def test_fewest_cores_without_a_target_rate_is_refused_before_profiling(write_spec):
    result = tandem("place", str(write_spec(BASE_SPEC)), "--fewest-cores")
    assert result.returncode == 2
    assert "needs every chain's target rate" in result.stderr
    assert "profil" not in result.stderr  # refused before any measurement


def test_a_file_that_is_no_spec_is_not_quoted_back(tmp_path):
    # A password file given by mistake (or, through an API, on purpose): its lines must not appear in the error.
    secret = "alice:$y$j9T$salt$hashhashhash:19000:0:99999:7:::"
    path = tmp_path / "shadow"
    path.write_text(f"root:!:19000:0:99999:7:::\n{secret}\n")
    result = tandem("validate", str(path))
    assert result.returncode == 2
    assert "not a Tandem spec" in result.stderr
    assert "alice" not in result.stderr and "hash" not in result.stderr, result.stderr


def test_an_unknown_key_is_quoted_only_when_it_reads_as_a_name(write_spec):
    result = tandem("validate", str(write_spec(BASE_SPEC + "Traffic_rate: 3\n'pass: hunter2!': 1\n")))
    assert result.returncode == 2
    assert "['Traffic_rate']: unknown field" in result.stderr
    assert "hunter2" not in result.stderr and "[a key of 14 characters, not quoted]" in result.stderr, result.stderr
