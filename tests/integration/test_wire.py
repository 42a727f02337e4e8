"""A wire between two Tandem nodes (bench/two_nodes.py: two network namespaces joined by a VXLAN whose ends are the
run's wire ports, an nftables rule in each node dropping 1 % of the VXLAN datagrams at random). ping and iperf3
cross from a lab client through node A's chain, the VXLAN and node B's chain to the server, and back. nftables is
the judge of the wire's losses: the datagrams its rule counted as dropped are the gaps the receiving port found in
the numbers, and what left one end = what came in + lost + still on the wire; the latency breakdown of the chain after
the wire starts with it."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from bench.two_nodes import (
    NODE_A,
    NODE_B,
    VNI,
    VXLAN_PORTS,
    WIRE_CHAINS,
    WIRE_PORTS,
    dropped_by_nftables,
    ip,
    two_nodes,
    wire_spec,
)
from conftest import requires_root, tandem
from controlplane.results.wire_balance import wire_balance
from integration.test_service import answered, ctl, serving

pytestmark = [
    requires_root,
    pytest.mark.skipif(
        any(shutil.which(tool) is None for tool in ("iperf3", "ping", "nft")),
        reason="the lab's tools are missing (scripts/setup.sh installs iperf3, iputils-ping, nftables)",
    ),
]
# Each way's loss: enough datagrams dropped in a few seconds of iperf3 to count, few enough for TCP to carry on.
LOSS_PERCENT = 1


@pytest.fixture
def nodes(machine_before):
    with two_nodes(LOSS_PERCENT) as made:
        yield made


@pytest.fixture
def lossless_nodes(machine_before):
    with two_nodes(0) as made:
        yield made


@pytest.fixture
def nodes_without_links(machine_before):
    """The nodes, no VXLAN between them: the wire's ports make it (VXLAN_PORTS)."""
    with two_nodes(LOSS_PERCENT, links=False) as made:
        yield made


@pytest.fixture
def lossless_nodes_without_links(machine_before):
    with two_nodes(0, links=False) as made:
        yield made


def test_the_wires_losses_are_what_nftables_dropped_and_each_way_balances(tmp_path, nodes_without_links):
    """The wire's VXLAN made by Tandem from its ports' spec (and removed at the end: machine_before checks)."""
    spec = tmp_path / "wire.yaml"
    spec.write_text(wire_spec(ports=VXLAN_PORTS))
    out = tmp_path / "results.json"
    result = tandem("run", str(spec), "--json", str(out), "--quiet", "--profile")
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"] and all(port["exact"] for port in results["ports"])
    # Each way's chain after the wire: its latency breakdown starts with the wire's one-way delay.
    explained = tandem("explain", str(out))
    assert explained.returncode == 0, explained.stderr
    for port in ("west", "east"):
        assert f"over the wire into {port}" in explained.stdout, explained.stdout
        assert f"the wire into {port} (one-way, every frame)" in explained.stdout, explained.stdout
    commands = {record["spec_path"]: record for record in results["lab"]}
    assert commands["lab.hosts[0].run[0]"]["figures"]["received"] > 0  # ping crossed both ways
    assert commands["lab.hosts[0].run[1]"]["figures"]["goodput_bps"] > 0  # and TCP, over a lossy wire
    ports = {port["name"]: port for port in results["ports"]}
    for sender, receiver, sending_node in (("east", "west", NODE_A), ("west", "east", NODE_B)):
        balance = wire_balance(ports[sender], ports[receiver])
        assert balance["exact"], (balance, ports[sender]["wire"], ports[receiver]["wire"])
        assert balance["sent"] == ports[sender]["transmitted"] > 1000
        # What nftables dropped on this way is what the numbers' gaps found; a datagram dropped after the last one
        # the receiver saw shows no gap: it is among those after it.
        dropped = dropped_by_nftables(sending_node)
        assert balance["lost"] <= dropped <= balance["lost"] + balance["after_last"], (balance, dropped)
        assert dropped > 0  # 1 % of over a thousand frames: none dropped is a rule that never ran, not luck
        wire = ports[receiver]["wire"]
        assert wire["foreign"] == 0 and wire["duplicates"] == 0 and wire["late"] == 0  # one veth: no reordering
        assert wire["delay"]["min_ns"] >= 0  # one host, one clock


def test_a_wire_whose_mtu_cannot_carry_the_trailer_is_refused_naming_the_field(tmp_path, nodes):
    ip("link", "set", NODE_A.vxlan, "mtu", "1450")  # a VXLAN's own default on a 1500-byte underlay
    spec = tmp_path / "wire.yaml"
    spec.write_text(wire_spec())
    result = tandem("validate", str(spec))
    assert result.returncode == 2, result.stderr
    assert "ports[0].wire" in result.stderr and f"{NODE_A.vxlan}'s MTU is 1450" in result.stderr, result.stderr
    assert "ports[1]" not in result.stderr and "Traceback" not in result.stderr


def iperf3_client_running() -> bool:
    return subprocess.run(["pgrep", "-f", "iperf3 --client"], capture_output=True).returncode == 0


def stopped_and_exact(socket, process, out) -> dict:
    """The service stopped (`ctl stop`), its results: exact accounting, every port's too."""
    assert ctl(socket, "stop").returncode == 0
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    results = json.loads(out.read_text())
    assert results["accounting"]["exact"] and all(port["exact"] for port in results["ports"])
    return results


def results_once_the_clients_ran(socket, process, out) -> dict:
    """The service's results, once its lab's clients ran (then stopped), checked: exact accounting on every port,
    ping answered only once the way was there (none before), iperf3 across."""
    # The clients run one after the other: ping's 6 s, then iperf3's 2 s. Done once iperf3 came and went (a pattern
    # for ping's own process matched nothing where the lab starts it, and the wait ended at once).
    deadline, seen = time.monotonic() + 60, False
    while time.monotonic() < deadline and not (seen and not iperf3_client_running()):
        seen = seen or iperf3_client_running()
        time.sleep(0.2)
    results = stopped_and_exact(socket, process, out)
    commands = {record["spec_path"]: record for record in results["lab"]}
    ping = commands["lab.hosts[0].run[0]"]["figures"]
    assert 0 < ping["received"] < ping["transmitted"], ping  # none answered before the way, then answered
    assert commands["lab.hosts[0].run[1]"]["figures"]["goodput_bps"] > 0
    return results


def arp_resolutions_failed() -> int:
    """Neighbour resolutions the kernel gave up on (ARP's table, all namespaces: its statistics are the table's)."""
    header, *cpus = Path("/proc/net/stat/arp_cache").read_text().split("\n")
    column = header.split().index("res_failed")
    return sum(int(row.split()[column], 16) for row in cpus if row.strip())


def the_clients_kernel_gave_up_on_the_server(failed_before: int, within_s: float = 20) -> None:
    """Waits until the lab client's kernel gave up asking for the server's address (ARP: 3 probes 1 s apart; the only
    resolution that fails here), which drops the pings it held for the answer. Added before that, the way back
    carried the answer in time and every ping held was sent and answered: none lost, however slowly the chains were
    added. (Its neighbour entry is FAILED only until ping's next packet, 10 ms on: the count is what tells.)"""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if arp_resolutions_failed() > failed_before:
            return
        time.sleep(0.1)
    raise AssertionError(f"the lab client's kernel still asks for the server's address after {within_s} s")


def test_the_way_back_over_the_wire_is_added_to_a_running_service(tmp_path, lossless_nodes):
    """A service starts with the way there only (client to server over the wire): nothing comes back, not even ARP's
    answers. The way back is added live, a chain on each node, each taking its frames from a port the service
    opened at the start (the server's lab port, the wire's east end): ping's answers come, then iperf3 runs."""
    spec = tmp_path / "wire.yaml"
    # 1,000 pings 10 ms apart: ping runs on after the client's kernel gave up on the server's address (3 s).
    spec.write_text(wire_spec(chains=("a-out", "b-in"), pings=1000))
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    failed_before = arp_resolutions_failed()
    with serving(spec, socket, out) as process:
        the_clients_kernel_gave_up_on_the_server(failed_before)
        for name in ("b-out", "a-in"):
            added = ctl(socket, "add-chain", "-", stdin=WIRE_CHAINS[name])
            assert added.returncode == 0, added.stderr
            assert answered(socket, json.loads(added.stdout))["state"] == "applied"
        refused = ctl(
            socket, "add-chain", "-", stdin=WIRE_CHAINS["a-in"].replace("a-in", "again").replace("count-a", "count-x")
        )
        assert refused.returncode == 2 and "port 'east' also feeds a-in" in refused.stderr, refused.stderr
        results = results_once_the_clients_ran(socket, process, out)
    chains = {chain["name"]: chain for chain in results["chains"]}
    assert chains["b-out"]["delivered"] > 0 and chains["a-in"]["delivered"] > 0
    ports = {port["name"]: port for port in results["ports"]}
    for sender, receiver in (("east", "west"), ("west", "east")):
        balance = wire_balance(ports[sender], ports[receiver])
        assert balance["exact"] and balance["lost"] == 0, balance


def test_the_wire_and_its_chains_are_added_to_a_running_service(tmp_path, lossless_nodes_without_links):
    """A service starts with its lab and no way between the nodes: ping asks in vain. The wire's ports are added live,
    their VXLAN made by Tandem (a node agent's move when the operator joins a chain across nodes), then the chains over
    it: ping's answers come, then iperf3 runs; each wire's count balances as if the ports had been there from the
    start, and the VXLANs are gone once the service stopped (machine_before checks)."""
    spec = tmp_path / "wire.yaml"
    # Rings of 512: two ports and four chains added fit in the room a service keeps for additions. The idle chain is
    # the generator's, whose default duration (5 s) would end the lab's clients early: a minute. 2,000 pings 10 ms
    # apart: the dozen requests below (a ctl process each) outlasted 600 on a busy host, and ping ended unanswered.
    spec.write_text(wire_spec(chains=(), pings=2000, ports=None, ring_capacity=512, duration=60))
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    # A VXLAN of someone else's in node A's namespace, on the VNI a request below asks for: the kernel refuses it.
    taken = ["id", "4243", "remote", NODE_B.address, "dstport", "4789"]
    ip("-n", NODE_A.namespace, "link", "add", "tdw-taken", "type", "vxlan", *taken)
    failed_before = arp_resolutions_failed()
    with serving(spec, socket, out) as process:
        the_clients_kernel_gave_up_on_the_server(failed_before)
        # Refused, naming the field, nothing opened or made: a file to read, a chain naming a port not opened yet, a
        # namespace that is not there, a VNI the kernel has for another VXLAN.
        refused = ctl(socket, "add-port", "-", stdin="{name: sniff, device: 'net_pcap_x,rx_pcap=/etc/shadow'}")
        assert refused.returncode == 2 and "(body.port.device)" in refused.stderr, refused.stderr
        refused = ctl(socket, "add-chain", "-", stdin=WIRE_CHAINS["a-out"])
        assert refused.returncode == 2 and "(body.chain.to)" in refused.stderr, refused.stderr
        nowhere = VXLAN_PORTS["east"].replace(NODE_A.namespace, "tdw-nowhere")
        refused = ctl(socket, "add-port", "-", stdin=nowhere)
        assert refused.returncode == 2 and "(body.port.vxlan.namespace)" in refused.stderr, refused.stderr
        refused = ctl(socket, "add-port", "-", stdin=VXLAN_PORTS["east"].replace(f"vni: {VNI}", "vni: 4243"))
        assert refused.returncode == 2 and "(body.port.vxlan)" in refused.stderr, refused.stderr
        assert "VNI already exists" in refused.stderr and not Path("/sys/class/net/tdx-east").exists()
        for name, port in VXLAN_PORTS.items():  # east's name free again after the kernel's refusal
            added = ctl(socket, "add-port", "-", stdin=port)
            assert added.returncode == 0, added.stderr
            change = answered(socket, json.loads(added.stdout))
            assert change["state"] == "applied" and change["port"] == name and change["open_us"] > 0, change
        again = ctl(socket, "add-port", "-", stdin=VXLAN_PORTS["east"].replace("name: east", "name: east2"))
        assert again.returncode == 2 and "(body.port.vxlan.vni)" in again.stderr, again.stderr
        again = ctl(socket, "add-port", "-", stdin=WIRE_PORTS["east"])
        assert again.returncode == 2 and "(body.port.name)" in again.stderr, again.stderr
        assert Path("/sys/class/net/tdx-east/mtu").read_text().strip() == "1520"  # a full packet and the trailer
        for name in WIRE_CHAINS:
            added = ctl(socket, "add-chain", "-", stdin=WIRE_CHAINS[name])
            assert added.returncode == 0, added.stderr
            assert answered(socket, json.loads(added.stdout))["state"] == "applied"
        assert {port["name"] for port in json.loads(ctl(socket, "status").stdout)["ports"]} >= {"east", "west"}
        results = results_once_the_clients_ran(socket, process, out)
    ports = {port["name"]: port for port in results["ports"]}
    for sender, receiver in (("east", "west"), ("west", "east")):
        balance = wire_balance(ports[sender], ports[receiver])
        assert balance["exact"] and balance["lost"] == 0 and balance["sent"] > 1000, balance


def change(socket, *args: str) -> dict:
    """A live change through `./tandem ctl`, applied (waited for where it was pending)."""
    done = ctl(socket, *args)
    assert done.returncode == 0, done.stderr
    reply = answered(socket, json.loads(done.stdout))
    assert reply["state"] == "applied", reply
    return reply


def test_the_wire_is_removed_from_a_running_service_once_its_chains_are(tmp_path, lossless_nodes_without_links):
    """A service with the wire between its nodes (its VXLANs made by Tandem) and the four chains over it, ping
    crossing. A wire port cannot go while chains use it. Node A's chains removed (fed by the client's port and by the
    wire: what their routes take is dropped from then on, counted, never passed around the removed firewall), then
    the east end: its device closed, its VXLAN gone, its report kept; node B's chains and the west end likewise.
    Every port's count stays exact, and the wire balances with nothing lost."""
    spec = tmp_path / "wire.yaml"
    spec.write_text(wire_spec(ports=VXLAN_PORTS, pings=3000))  # 30 s of pings: the service is stopped before
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(spec, socket, out) as process:
        time.sleep(2)  # ping crosses
        busy = ctl(socket, "remove-port", "east")
        assert busy.returncode == 2 and "chains a-out, a-in take from it or send to it" in busy.stderr, busy.stderr
        lab = ctl(socket, "remove-port", "client")
        assert lab.returncode == 2 and "a lab host's port" in lab.stderr, lab.stderr
        for chain in ("a-out", "a-in"):
            change(socket, "remove-chain", chain)
        time.sleep(1)  # the client's pings go on, into a-out's closed route
        east = change(socket, "remove-port", "east")
        assert east["report"]["removed"] and east["report"]["exact"], east
        assert not Path("/sys/class/net/tdx-east").exists()
        again = ctl(socket, "remove-port", "east")
        assert again.returncode == 2 and "removed already" in again.stderr, again.stderr
        refused = ctl(
            socket, "add-chain", "-", stdin=WIRE_CHAINS["a-out"].replace("a-out", "a-again").replace("fw-a", "fw-again")
        )
        assert refused.returncode == 2 and "(body.chain.to)" in refused.stderr, refused.stderr
        for chain in ("b-out", "b-in"):
            change(socket, "remove-chain", chain)
        change(socket, "remove-port", "west")
        assert not Path("/sys/class/net/tdx-west").exists()
        status = json.loads(ctl(socket, "status").stdout)
        assert {port["name"] for port in status["ports"] if port.get("removed")} == {"east", "west"}
        results = stopped_and_exact(socket, process, out)
    ports = {port["name"]: port for port in results["ports"]}
    assert ports["client"]["for_removed_chains"] > 0  # a second of pings, dropped where a-out's route took them
    assert ports["east"]["transmitted"] == east["report"]["transmitted"] > 0  # nothing crossed once it was closed
    for sender, receiver in (("east", "west"), ("west", "east")):
        balance = wire_balance(ports[sender], ports[receiver])
        assert balance["exact"] and balance["lost"] == 0 and balance["sent"] > 0, balance
