"""Real applications as traffic (`lab`): ping, iperf3 and curl in network namespaces that Tandem makes, their packets
through chains between the namespaces' veths. The clients' own figures are the judge: every ping answered, TCP
goodput, a web page byte for byte, attacks refused and counted. Ctrl-C, a killed NF and a SIGKILLed control plane
leave no namespace, veth or process behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import REPO, requires_root, tandem
from integration.test_restarts import CUT_MID_OPERATION, CUT_TRIES
from integration.test_runs import worker_pid
from integration.test_tagged_frames import tshark_fields

pytestmark = [
    requires_root,
    pytest.mark.skipif(
        any(shutil.which(tool) is None for tool in ("iperf3", "ping", "curl", "ethtool", "tshark")),
        reason="the lab's tools are missing (scripts/setup.sh installs iperf3, iputils-ping, curl, ethtool, tshark)",
    ),
]
EXAMPLES = REPO / "examples"


def run_lab(spec, tmp_path, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "results.json"
    result = tandem("run", str(spec), "--json", str(out), "--quiet", *extra)
    return result, json.loads(out.read_text()) if out.exists() else {}


def records(results: dict) -> dict[str, dict]:
    """The lab's command records by their place in the spec."""
    return {record["spec_path"]: record for record in results["lab"]}


def test_ping_and_iperf3_cross_three_firewalls_with_every_packet_accounted(tmp_path, machine_before):
    result, results = run_lab(EXAMPLES / "lab-firewalls.yaml", tmp_path)
    assert result.returncode == 0, result.stderr
    commands = records(results)
    assert all(record["met"] for record in results["lab"]), results["lab"]
    ping = commands["lab.hosts[0].run[0]"]["figures"]
    assert ping["transmitted"] == 20 and ping["received"] == 20  # at 20 a second, nothing queues: none lost
    iperf3 = commands["lab.hosts[0].run[1]"]["figures"]
    assert iperf3["goodput_bps"] > 0
    assert results["accounting"]["exact"] and all(port["exact"] for port in results["ports"])
    chains = {chain["name"]: chain for chain in results["chains"]}
    # Both ways through the chains: ping's requests and iperf3's data one way, replies and ACKs the other.
    assert chains["to-server"]["delivered"] >= 20 and chains["to-client"]["delivered"] >= 20
    ports = {port["name"]: port for port in results["ports"]}
    assert ports["client"]["passed"] >= 1  # ARP: the hosts found each other across the chain
    # What the chain delivered left by the other host's port, and nothing was refused there.
    assert ports["server"]["transmitted"] == chains["to-server"]["delivered"] + ports["client"]["passed"]
    assert ports["server"]["tx_refused"] == 0
    # What the kernel dropped at a port's packet ring, before Tandem saw it, is read and reported (not left out).
    assert all("kernel_ring_drops" in port["device_counters"] for port in results["ports"])


def test_curl_gets_its_page_byte_for_byte_and_attacks_are_refused_and_counted(tmp_path, machine_before):
    capture = tmp_path / "delivered.pcap"
    result, results = run_lab(EXAMPLES / "lab-waf.yaml", tmp_path, "--capture", str(capture))
    assert result.returncode == 0, result.stderr
    commands = records(results)
    assert all(record["met"] for record in results["lab"]), results["lab"]
    assert commands["lab.hosts[0].run[0]"]["exit_status"] == 0  # curl | cmp: the page as the server has it
    assert commands["lab.hosts[0].run[1]"]["figures"]["code"] == 200
    for attack in ("lab.hosts[0].run[2]", "lab.hosts[0].run[3]", "lab.hosts[0].run[6]"):
        assert commands[attack]["exit_status"] == 28, commands[attack]  # curl's "timed out": no answer came
    assert commands["lab.hosts[0].run[7]"]["exit_status"] == 0  # the apostrophe of a name is no attack
    # A request line cut in two TCP segments: the benign one answered, the attack not (the client gave up).
    assert commands["lab.hosts[0].run[4]"]["exit_status"] == 0
    assert commands["lab.hosts[0].run[5]"]["exit_status"] == 1
    nfs = {nf["name"]: nf for nf in results["nfs"]}
    report = nfs["waf"]["report"]
    # The tautology (whole, and split), the UNION SELECT and the boolean probe, each at least once (TCP retransmits a
    # dropped request), each found by the Core Rule Set's SQL-injection rules (942xxx).
    assert report["dropped_by_crs"] >= 4, report
    assert report["crs_rules_matched"] and all(rule.startswith("942") for rule in report["crs_rules_matched"]), report
    assert report["reassembled"] >= 1 and report["dropped_out_of_order"] == 0, report
    assert nfs["waf"]["packets_dropped"] == report["dropped_by_crs"]
    urls = {entry["url"] for entry in nfs["urls"]["report"]["top"]}
    # Only the benign requests got past the WAF, the split one counted once.
    assert urls == {"/index.html", "/index.html?page=2", "/index.html?page=split", "/index.html?q=O%27Reilly%20books"}
    assert results["accounting"]["exact"]
    # Wireshark, reassembling what Tandem delivered to the server as the server's TCP did, finds the same requests:
    # the split one whole, and no attack (its first half went through, never the rest).
    seen = tshark_fields(capture, ["http.request.uri", "tcp.reassembled.length"], ("-Y", "http.request"))
    assert sorted(row["http.request.uri"] for row in seen) == sorted(urls), seen
    assert [row["http.request.uri"] for row in seen if row["tcp.reassembled.length"]] == ["/index.html?page=split"]


LONG_LAB = """\
name: long-lab
scheduler: coop
lab:
  hosts:
    - {name: client, run: [{command: "iperf3 --client {server} --time 60", time_limit: 70}]}
    - {name: server, serve: ["iperf3 --server"]}
chains:
  - {name: there, from: client, to: server, nfs: [{name: fw, type: firewall, core: 1}]}
  - {name: back, from: server, to: client, nfs: [{name: fw-back, type: firewall, core: 1}]}
"""


def start_lab(spec, out) -> subprocess.Popen:
    """A lab run in the background, returned once its client has started (iperf3 prints its first interval)."""
    process = subprocess.Popen(
        [str(REPO / "tandem"), "run", str(spec), "--json", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and subprocess.run(["pgrep", "-f", "iperf3 --client"]).returncode != 0:
        time.sleep(0.2)
    time.sleep(1)
    return process


def test_ctrl_c_in_a_lab_run_stops_the_clients_and_leaves_nothing_behind(write_spec, tmp_path, machine_before):
    out = tmp_path / "results.json"
    process = start_lab(write_spec(LONG_LAB), out)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    results = json.loads(out.read_text())
    client = records(results)["lab.hosts[0].run[0]"]
    assert client["interrupted"] and client["seconds"] < 30
    assert results["accounting"]["exact"]


def test_a_killed_nf_in_a_lab_run_is_named_and_leaves_nothing_behind(write_spec, tmp_path, machine_before):
    process = start_lab(write_spec(LONG_LAB), tmp_path / "results.json")
    workers = subprocess.run(["pgrep", "-x", "tandem-worker"], capture_output=True, text=True).stdout.split()
    assert workers, "no worker runs"
    subprocess.run(["kill", "-KILL", workers[0]])
    stdout, stderr = process.communicate(timeout=90)
    assert process.returncode == 1, stderr
    assert "fw" in stderr and ("killed" in stderr or "signal" in stderr), stderr


def test_a_sigkilled_control_plane_leaves_a_lab_the_next_run_removes(write_spec, tmp_path, machine_before):
    process = start_lab(write_spec(LONG_LAB), tmp_path / "killed.json")
    process.kill()  # no cleanup runs in the control plane: its servers and clients die with it, its journal stays
    process.wait()
    result = tandem("validate", str(EXAMPLES / "lab-waf.yaml"))  # takes no lock: nothing is cleared yet
    assert result.returncode == 0
    result, results = run_lab(EXAMPLES / "lab-waf.yaml", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "removed network namespace" in result.stderr and "did not end cleanly" in result.stderr


def test_real_clients_cross_kernel_io_nfs_and_one_killed_under_iperf3_comes_back_on_its_veths(tmp_path, machine_before):
    # examples/lab-kernel-chain.yaml: both ways through NFs on packet sockets in namespaces of their own. A full-size
    # ping crosses (at the veths' MTU of 1,500 the packet's record after the frame kept every such frame from the
    # first NF's socket), curl gets its page byte for byte, and `route`, killed while iperf3 sends, is restarted on
    # its veths: TCP sends again what it lost, and every command does what the spec expects.
    out = tmp_path / "results.json"
    for _ in range(CUT_TRIES):  # a kill inside a pool operation ends the run instead (test_restarts.py says why)
        process = start_lab(EXAMPLES / "lab-kernel-chain.yaml", out)
        os.kill(worker_pid(0, process), signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=90)
        if process.returncode == 0 or CUT_MID_OPERATION not in stderr:
            break
    assert process.returncode == 0, stderr
    results = json.loads(out.read_text())
    assert all(record["met"] for record in results["lab"]), results["lab"]
    commands = records(results)
    assert commands["lab.hosts[0].run[0]"]["figures"]["received"] == 10
    assert commands["lab.hosts[0].run[2]"]["figures"]["goodput_bps"] > 0
    (restart,) = results["restarts"]
    assert restart["nfs"] == "route", restart
    assert results["accounting"]["exact"], results["accounting"]
    links = {ring["name"]: ring["kernel_link"] for ring in results["rings"]}
    # No frame was lost on its way to a socket, full-size ones included: what the dead socket held is counted apart,
    # lost with its receiver (among the entry's drops), and the rest of the drops are full sockets'.
    assert all(link["lost_before_socket"] == 0 for link in links.values()), links


def test_compare_on_a_lab_reports_the_clients_figures_beside_the_kernels(tmp_path, machine_before):
    out = tmp_path / "comparison.json"
    spec = EXAMPLES / "lab-firewalls.yaml"
    result = tandem("compare", str(spec), "--schedulers", "coop", "--repeat", "1", "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    comparison = json.loads(out.read_text())
    kernel = comparison["kernel"]["median"]
    coop = comparison["schedulers"]["coop"]["median"]
    for figures in (kernel, coop):
        assert figures["lab_goodput_gbps"] > 0 and figures["lab_commands_met"] == 1
        assert figures["lab_rtt_p50_us"] > 0 and figures["lab_ping_loss_percent"] == 0
    assert comparison["kernel"]["runs"][0]["rules"] == 301  # to the server: fw1's one rule, and 100 synthetic x 3
    assert "vs kernel" in result.stdout and "kernel " in result.stdout
