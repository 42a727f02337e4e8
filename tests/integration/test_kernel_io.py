"""Kernel-I/O chains on real veths and packet sockets (issue 19): three NFs back to back and through a bridge or Open
vSwitch, under cfs and scc, one frame or many per system call, and chains that mix DPDK and kernel-I/O NFs; exact
accounting and hop order; every namespace and interface gone after a normal end, Ctrl-C and a SIGKILLed run (a killed
NF: test_runs.py); specs the machine or the scheduler cannot run exit 2."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from conftest import BASE_SPEC, KERNEL_SPEC, MIXED_SPEC, REPO, requires_root, tandem
from controlplane.machine import kernel_links, ovs_switch
from integration.system_calls import syscalls_of
from integration.test_runs import assert_accounted, assert_schedule_kept, run_results, start_run
from integration.test_service import STATUS_PERIOD, answered, ctl, results_when_stopped, serving, takes_packets

pytestmark = requires_root


def assert_carried_what_entered(results: dict) -> None:
    """The chain delivered what its first NF took in, but for what the links inside it held at the stop or dropped,
    and every drop was at a link, none at an NF (these NFs drop only invalid frames).

    Not how much the generator sent: how much entered is what this host's CPU gave the first NF, and on a busy or
    slow host the entry socket keeps or drops the rest (counted; one bridge run with mux 1 under scc delivered 30 k
    of 65 k that way with other processes on the machine, its three NFs needing 0.87 of the core here). Once taken,
    a packet's next NFs share its core under the same policy, so the chain itself loses little: 0.2-2.4 % of what
    entered in runs here, stress-ng beside them on either core included. A chain that lost half inside fails."""
    chain = results["chains"][0]
    entered = next(ring["dequeued"] for ring in results["rings"] if ring["name"].endswith(":entry"))
    assert entered > 0, results["rings"]
    assert chain["delivered"] >= 0.75 * entered, (chain["delivered"], entered, chain["dropped"], chain["in_flight"])
    assert not any(chain["dropped"]["nfs"].values()) and not chain["dropped"]["label_misses"], chain["dropped"]
    assert chain["dropped"]["total"] == sum(chain["dropped"]["rings"].values()), chain["dropped"]
    # The 50 kpps asked fell due whatever the NFs took (offered, or given up while the control core stalled).
    assert_schedule_kept(chain, 0.05)


# Frames of 64 bytes, and of the spec's largest (1,518) with the packet's record after each: at the veths' MTU of
# 1,500, none of those reached the first NF's socket.
@pytest.mark.parametrize(
    "link,scheduler,mux,size",
    [
        ("b2b", "cfs", 8, 64),
        ("b2b", "scc", 32, 64),
        ("b2b", "cfs", 1, 64),
        ("b2b", "cfs", 8, 1518),
        ("bridge", "cfs", 8, 64),
        ("bridge", "scc", 1, 64),
        ("bridge", "cfs", 8, 1518),
        ("ovs-userspace", "cfs", 8, 64),
        ("ovs", "scc", 8, 64),
    ],
)
def test_three_kernel_nfs_deliver_in_order_with_exact_accounts(
    link, scheduler, mux, size, write_spec, tmp_path, machine_before
):
    if link.startswith("ovs") and ovs_switch.missing_reason("system" if link == "ovs" else "netdev"):
        pytest.skip(ovs_switch.missing_reason("system" if link == "ovs" else "netdev"))
    spec = KERNEL_SPEC.replace("link: b2b", f"link: {link}").replace("mux: 8", f"mux: {mux}")
    spec = spec.replace("size: 64", f"size: {size}")
    out = tmp_path / "r.json"
    result = tandem("run", str(write_spec(spec)), "--scheduler", scheduler, "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert_accounted(results)  # generated = delivered + dropped + in flight, and every packet took a -> b -> c
    assert_carried_what_entered(results)
    assert [w["name"] for w in results["workers"]] == ["a", "b", "c3"]
    links = {ring["name"]: ring for ring in results["rings"]}
    assert set(links) == {"c:entry", "c:a->b", "c:b->c3", "c:exit"}
    for ring in links.values():
        assert "kernel_link" in ring, ring
        assert ring["enqueued"] >= ring["dequeued"]
    # The kernel's own counters, read before the namespaces went: every frame the generator sent crossed its veth.
    interfaces = results["kernel_interfaces"]["c"]
    assert set(interfaces) == {"generator", "sink", "a:in", "a:out", "b:in", "b:out", "c3:in", "c3:out"}
    assert interfaces["generator"]["tx_packets"] >= links["c:entry"]["enqueued"]
    assert interfaces["sink"]["rx_packets"] >= links["c:exit"]["dequeued"]
    if scheduler == "scc":
        report = results["scheduler"]["report"]
        assert report["policy"] == "batch" and report["nice"] == -19 and report["eq1_quantum_ms"] == 780
        assert set(report["measured"]) == {"a", "b", "c3"}
        assert all(nf["timeslices"] > 0 for nf in report["measured"].values())


# Kernel, DPDK, kernel: the DPDK NF's two links are veths, read and written by its own sockets. DPDK, kernel, DPDK:
# the generator and the sink reach the chain by rings, the kernel NF by veths from its DPDK neighbours.
DPDK_KERNEL_DPDK = (
    BASE_SPEC.replace("rate: max", "rate: 0.05 Mpps")
    .replace("scheduler: coop", "scheduler: cfs")
    .replace("  - name: c\n", "  - name: c\n    mux: 8\n")
    .replace("{name: b, type: ttl, core: 1}", "{name: b, type: ttl, core: 1, io: kernel}")
)
# Per mix: its spec, its kernel links, its kernel-I/O NFs, and the interfaces the kernel counted (only the kernel
# links' ends; the generator's and the sink's where the chain's ends are kernel-I/O NFs).
MIXED = {
    "kernel-dpdk-kernel": (
        MIXED_SPEC,
        {"c:entry", "c:a->b", "c:b->c3", "c:exit"},
        {"a", "c3"},
        {"generator", "sink", "a:in", "a:out", "b:in", "b:out", "c3:in", "c3:out"},
    ),
    "dpdk-kernel-dpdk": (DPDK_KERNEL_DPDK, {"c:a->b", "c:b->c3"}, {"b"}, {"a:out", "b:in", "b:out", "c3:in"}),
}


@pytest.mark.parametrize("scheduler", ["cfs", "scc"])
@pytest.mark.parametrize("mix", sorted(MIXED))
def test_a_chain_that_mixes_dpdk_and_kernel_nfs_delivers_in_order_with_exact_accounts(
    mix, scheduler, write_spec, tmp_path, machine_before
):
    spec, links, kernel_nfs, interfaces = MIXED[mix]
    out = tmp_path / "r.json"
    result = tandem("run", str(write_spec(spec)), "--scheduler", scheduler, "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert_accounted(results)  # exact, and every packet took a -> b -> c3 across rings and veths alike
    assert_carried_what_entered(results)
    assert {nf["name"] for nf in results["nfs"] if nf["io"] == "kernel"} == kernel_nfs
    assert {ring["name"] for ring in results["rings"] if "kernel_link" in ring} == links
    assert set(results["kernel_interfaces"]["c"]) == interfaces


def test_a_chain_that_mixes_io_through_a_switch_is_refused(write_spec, machine_before):
    result = tandem("run", str(write_spec(MIXED_SPEC.replace("link: b2b", "link: bridge"))), "--quiet")
    assert result.returncode == 2
    assert "chains[0].link" in result.stderr and "back to back" in result.stderr and "Traceback" not in result.stderr


def test_ovs_without_its_kernel_module_exits_2_saying_why(write_spec, machine_before):
    if ovs_switch.KERNEL_MODULE.exists():
        pytest.skip("this kernel has the openvswitch module")
    result = tandem("run", str(write_spec(KERNEL_SPEC.replace("link: b2b", "link: ovs"))), "--quiet")
    assert result.returncode == 2, result.stderr
    assert "openvswitch" in result.stderr and "Traceback" not in result.stderr


def test_a_scheduler_that_needs_rings_refuses_a_kernel_chain(write_spec, machine_before):
    result = tandem("run", str(write_spec(KERNEL_SPEC)), "--scheduler", "coop", "--quiet")
    assert result.returncode == 2
    assert "chains[0].io" in result.stderr and "kernel-I/O chains run under" in result.stderr


def test_mux_on_a_dpdk_chain_is_refused(write_spec, machine_before):
    result = tandem("run", str(write_spec(KERNEL_SPEC.replace("    io: kernel\n", ""))), "--quiet")
    assert result.returncode == 2
    assert "chains[0].mux" in result.stderr


@pytest.mark.parametrize(
    "spec", [KERNEL_SPEC.replace("link: b2b", "link: bridge"), MIXED_SPEC], ids=["bridge", "mixed"]
)
def test_ctrl_c_on_a_kernel_chain_stops_cleanly(spec, write_spec, tmp_path, machine_before):
    out = tmp_path / "r.json"
    process, _ = start_run(write_spec(spec), out)
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == 130
    results = run_results(out)
    assert results["chains"][0]["delivered"] > 0
    assert_accounted(results)


@pytest.mark.parametrize("link", ["bridge", "ovs-userspace"])
def test_run_after_a_sigkilled_kernel_run_removes_its_namespaces(link, write_spec, tmp_path, machine_before):
    if link == "ovs-userspace" and ovs_switch.missing_reason("netdev"):
        pytest.skip(ovs_switch.missing_reason("netdev"))
    spec = write_spec(KERNEL_SPEC.replace("link: b2b", f"link: {link}"))
    process, _ = start_run(spec, tmp_path / "killed.json", "--scheduler", "scc")
    time.sleep(1)
    process.kill()  # no cleanup in the control plane: namespaces, veths, the bridge and the affinities stay
    process.wait()
    left = kernel_links.leftovers()
    assert left, "the killed run had nothing to leave behind"
    assert not any("ovs" in item for item in left), left  # Open vSwitch's daemons die with the CLI that started them
    deadline = time.monotonic() + 10
    while (
        time.monotonic() < deadline
        and subprocess.run(["pgrep", "-x", "tandem-worker"], capture_output=True).returncode == 0
    ):
        time.sleep(0.1)
    out = tmp_path / "next.json"
    result = tandem("run", str(spec), "--duration", "1", "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "removed network namespace" in result.stderr and "which did not end cleanly" in result.stderr
    assert_accounted(run_results(out))


def test_profiling_a_kernel_chain_counts_its_system_calls_and_kernel_time(write_spec, tmp_path, machine_before):
    # One frame per system call (mux 1): what the loop must call is then fixed by the code, not by the host.
    out = tmp_path / "r.json"
    spec = KERNEL_SPEC.replace("mux: 8", "mux: 1")
    result = tandem("run", str(write_spec(spec)), "--profile", "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = run_results(out)
    assert_accounted(results)
    for worker in results["profile"]["perf_counters"]["workers"]:
        # Each frame needs its own recvfrom and sendto: 2 a packet at least (counted over the same window as the
        # packets). A wake-up for n frames adds the receive that finds the socket empty, and the loop's next turn one
        # more and a poll: (2n + 3) / n, at most 5 a packet, plus idle polls (a millisecond apart; 0.04 a packet at
        # 50 kpps). Measured 2.9-3.0 here. A counter that counted half or twice the calls fails.
        per_packet = syscalls_of(worker)["per_packet"]
        assert 1.9 <= per_packet <= 5.5, worker
    for nf in results["nfs"]:
        # A kernel-I/O NF's CPU time is mostly the kernel's: 0.27-0.33 of the core against 0-0.03 in user space here,
        # but 0.16 against 0.11 in one CI run (/proc's ticks, 10 ms each): more than half, not twice, is what holds.
        assert nf["os"]["system_share"] > nf["os"]["user_share"], nf["os"]
    assert "kernel % of CPU" in result.stdout


ADDED_KERNEL_CHAIN = """\
name: routers
io: kernel
mux: 8
link: {link}
traffic: {{rate: 20 kpps, flows: 8}}
nfs:
  - {{name: r1, type: ttl, core: 1}}
  - {{name: r2, type: ttl, core: 1}}
"""


def namespaces_of(*nfs: str) -> list[str]:
    """The network namespaces of a run's NFs named `nfs` (a run names them RUN-NF)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")
    return [line.split()[0] for line in listed if line.startswith("tandem") and line.split()[0].endswith(nfs)]


def switch_daemons() -> list[str]:
    """The Open vSwitch daemons a run started and that still run (each switched chain has its own)."""
    return [item for item in kernel_links.leftovers() if item.startswith("process")]


@pytest.mark.parametrize("link,scheduler", [("b2b", "scc"), ("bridge", "cfs"), ("ovs-userspace", "cfs")])
def test_a_kernel_chain_added_and_removed_under_traffic_brings_and_takes_its_namespaces(
    link, scheduler, write_spec, tmp_path, machine_before
):
    if link == "ovs-userspace" and ovs_switch.missing_reason("netdev"):
        pytest.skip(ovs_switch.missing_reason("netdev"))
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    # The service's own chain on the same link: one the service started with goes the same way as one added.
    spec = KERNEL_SPEC.replace("scheduler: cfs", f"scheduler: {scheduler}").replace("link: b2b", f"link: {link}")
    switches = 2 if link.startswith("ovs") else 0  # daemons a switched chain's own Open vSwitch runs
    with serving(write_spec(spec.replace("duration: 1\n", "")), socket, out) as process:
        assert namespaces_of("-r1", "-r2") == [] and len(switch_daemons()) == switches
        adding = ctl(socket, "add-chain", "-", stdin=ADDED_KERNEL_CHAIN.format(link=link))
        assert adding.returncode == 0, adding.stderr
        added = answered(socket, json.loads(adding.stdout))
        assert added["state"] == "applied" and added["nfs_started"] == "r1,r2", added
        # Its NFs in namespaces of their own, made for it; its packets through them (in the status once the data
        # plane's next report has it).
        assert len(namespaces_of("-r1", "-r2")) == 2
        # A switched chain's switch with it: an Open vSwitch of its own (ovsdb-server and ovs-vswitchd).
        assert len(switch_daemons()) == 2 * switches
        time.sleep(STATUS_PERIOD)
        assert takes_packets(socket, "r2")
        removed = answered(socket, json.loads(ctl(socket, "remove-chain", "routers").stdout))
        assert removed["state"] == "applied" and removed["nfs_stopped"] == "r1,r2" and removed["drained"], removed
        # Its namespaces (with their veths) and its switch go with it; the chain that was there first runs on.
        assert namespaces_of("-r1", "-r2") == [] and len(switch_daemons()) == switches
        assert takes_packets(socket, "c3")
        # The chain that was there at the start goes the same way.
        assert answered(socket, json.loads(ctl(socket, "remove-chain", "c").stdout))["state"] == "applied"
        assert namespaces_of("-a", "-b", "-c3") == [] and switch_daemons() == []
        results = results_when_stopped(socket, process, out)
    assert_accounted(results)
    routers = next(chain for chain in results["chains"] if chain["name"] == "routers")
    assert routers["delivered"] > 0 and routers["generated"] == routers["delivered"] + routers["dropped"]["total"]
    workers = {worker["nfs"]: worker["exit"] for worker in results["workers"]}
    assert workers["r1"] == workers["r2"] == "exited with status 0", workers


# A lab whose client's way to the server has no chain at the start: its client waits for the test's word (a file),
# then pings with full-size packets and gets a page through the kernel chain added meanwhile from its port, and says
# when it is done (another file).
LAB_WITHOUT_A_WAY_THERE = """\
name: kernel-added-lab
scheduler: cfs
lab:
  hosts:
    - name: client
      run:
        - {{command: "sh -c 'while [ ! -e {go} ]; do sleep 0.1; done; ping -c 5 -i 0.1 -W 2 -s 1472 {{server}}'",
           time_limit: 60}}
        - "sh -c 'curl --silent --fail http://{{server}}:8080/index.html | cmp - {www}/index.html && touch {done}'"
    - name: server
      serve: ["python3 -m http.server 8080 --bind {{server}} --directory {www}"]
chains:
  - {{name: back, from: server, to: client, io: kernel, nfs: [{{name: check-back, type: checkip, core: 1}}]}}
"""
ADDED_FROM_THE_CLIENT = """\
name: there
from: client
to: server
io: kernel
mux: 32
link: {link}
nfs:
  - {{name: route, type: ttl, core: 1}}
  - {{name: fw, type: firewall, core: 1, args: {{synthetic_rules: 10}}}}
"""


# Back to back, and through an Open vSwitch of the chain's own that joins the service with it and leaves with it.
@pytest.mark.parametrize("link", ["b2b", "ovs-userspace"])
def test_a_kernel_chain_added_live_from_a_lab_port_carries_its_clients_and_goes_whole(
    link, write_spec, tmp_path, machine_before
):
    if link == "ovs-userspace" and ovs_switch.missing_reason("netdev"):
        pytest.skip(ovs_switch.missing_reason("netdev"))
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    go, done = tmp_path / "go", tmp_path / "done"
    spec = LAB_WITHOUT_A_WAY_THERE.format(go=go, done=done, www=REPO / "examples" / "lab-www")
    with serving(write_spec(spec), socket, out) as process:
        adding = ctl(socket, "add-chain", "-", stdin=ADDED_FROM_THE_CLIENT.format(link=link))
        added = answered(socket, json.loads(adding.stdout))
        assert added["state"] == "applied" and added["nfs_started"] == "route,fw", added
        assert len(namespaces_of("-route", "-fw")) == 2
        assert len(switch_daemons()) == (2 if link.startswith("ovs") else 0)
        go.touch()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not done.exists():
            time.sleep(0.2)
        removed = answered(socket, json.loads(ctl(socket, "remove-chain", "there").stdout))
        assert removed["state"] == "applied" and removed["drained"], removed
        assert namespaces_of("-route", "-fw") == [] and switch_daemons() == []
        results = results_when_stopped(socket, process, out)
    assert all(record["met"] for record in results["lab"]), results["lab"]
    assert_accounted(results)
    # The client's packets took the added chain: the five pings and the request's segments, every one delivered.
    there = next(chain for chain in results["chains"] if chain["name"] == "there")
    assert there["delivered"] == there["generated"] >= 5 + 3, there
    fw = next(nf for nf in results["nfs"] if nf["name"] == "fw")
    assert fw["packets_in"] == there["delivered"], fw


def test_a_kernel_chain_a_service_cannot_run_is_refused_and_leaves_no_namespace(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    service = BASE_SPEC.replace("rate: max", "rate: 50 kpps").replace("duration: 1\n", "")
    with serving(write_spec(service), socket, out) as process:
        # Its links made, then taken back: an Open vSwitch's daemons too.
        for link in ("b2b", *(() if ovs_switch.missing_reason("netdev") else ("ovs-userspace",))):
            refused = ctl(socket, "add-chain", "-", stdin=ADDED_KERNEL_CHAIN.format(link=link))
            says = "(body.chain.io): coop cannot schedule kernel-I/O NFs"
            assert refused.returncode == 2 and says in refused.stderr, refused.stderr
            assert namespaces_of("") == [] and switch_daemons() == []  # the service's chain has none
        assert_accounted(results_when_stopped(socket, process, out))
