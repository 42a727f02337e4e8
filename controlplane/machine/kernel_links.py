"""The network a chain's kernel-I/O NFs run on: a network namespace per NF (the paper's containers), veths between
neighbours (b2b) or to a Linux bridge in a switch namespace of its own (bridge), and two veths in the root namespace
where the manager's generator and sink attach. In a chain that mixes DPDK and kernel-I/O NFs (b2b only), only the
kernel links are veths, and only the NFs at their ends get namespaces. Every namespace and interface is made through
the run's MachineSession, so it is removed on every exit path; the chain's `io` entry is filled in for the data
plane."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from controlplane.errors import SetupError
from controlplane.machine import changes, ovs_switch

# Interfaces in the root namespace: short (15 characters at most) and Tandem's own. One run holds the machine at a
# time, and a killed run's are removed by the next (its journal).
ROOT_INTERFACE_PREFIXES = ("tdg", "tds", "tdl")  # generators, sinks, lab hosts (lab_network)
# Every veth of a kernel link carries a frame of a 1,500-byte IP packet with the packet's record after it (at most 90
# bytes: contract/wire_meta.h); at the veths' 1,500 such a frame from a lab host never reached the next NF's socket.
LINK_MTU = "1600"


def ip(*args: str) -> None:
    """Runs one iproute2 command; a refusal is a SetupError that quotes it."""
    result = subprocess.run(["ip", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SetupError(
            f"cannot set up the kernel chain's network: `ip {' '.join(args)}` said: {result.stderr.strip()}"
        )


def _mac(chain: int, node: int) -> str:
    # Locally administered, unicast, and unique per chain and node (node 255: the sink's interface).
    return f"02:74:64:{chain:02x}:{node:02x}:00"


def _without_ipv6(netns: str | None, interface: str | None = None) -> None:
    """IPv6 would send router solicitations into the chain: off in a new namespace, or on one root interface."""
    if netns is not None:
        subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                netns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ],
            capture_output=True,
        )
        return
    path = Path(f"/proc/sys/net/ipv6/conf/{interface}/disable_ipv6")
    if path.exists():
        path.write_text("1")


def build(session, run_id: str, chains: list[dict], switch_core: int | None = None) -> None:
    """Makes every kernel-I/O chain's namespaces and links and fills in its `io` entry (chains as in the run config).
    `switch_core`: where a switched chain's switch runs (-1: on its NFs' core, SCC's uniprocessor plan; N: core N, its
    multiprocessor plan); None leaves it to the kernel."""
    for c, chain in enumerate(chains):
        build_chain(session, run_id, c, chain, switch_core)


def build_chain(session, run_id: str, number: int, chain: dict, switch_core: int | None = None) -> None:
    """Makes one chain's namespaces and links, if it is kernel-I/O, and fills in its `io` entry; `number` names its
    root interfaces and switch (each chain of a run has its own)."""
    io = chain.get("io")
    if not io or io.get("kind") != "kernel":
        return
    links = kernel_links(chain["nfs"])
    # A namespace for every NF with a kernel link: each kernel-I/O NF, and a DPDK NF beside one.
    namespaces = [f"{run_id}-{nf['name']}" if links[k] or links[k + 1] else "" for k, nf in enumerate(chain["nfs"])]
    generator, sink = (f"tdg{number}" if links[0] else ""), (f"tds{number}" if links[-1] else "")
    # Every name free before anything is made: what remove_chain removes (`made`) was made for this chain alone.
    made = {
        "namespaces": [*filter(None, namespaces), *([f"{run_id}-sw{number}"] if io["link"] != "b2b" else [])],
        "interfaces": [name for name in (generator, sink) if name],
    }
    taken = [name for name in made["namespaces"] if (Path("/run/netns") / name).exists()]
    taken += [name for name in made["interfaces"] if Path(f"/sys/class/net/{name}").exists()]
    if taken:
        raise SetupError(f"cannot set up the kernel chain's network: {taken[0]} exists already and is not this chain's")
    io["made"] = made
    for netns in filter(None, namespaces):
        session.own_netns(netns)
        _without_ipv6(netns)
    if io["link"] == "b2b":
        nfs = _back_to_back(session, namespaces, links, generator, sink)
        entry_next_hop = ""
    else:
        core = None if switch_core is None else chain["nfs"][0]["core"] if switch_core < 0 else switch_core
        if io["link"] == "bridge":
            nfs, entry_next_hop = _through_bridge(session, run_id, number, namespaces, generator, sink, core)
        else:
            # Its switch's daemons and files, stopped and removed with the chain (remove_chain).
            made["switch_directory"] = str(changes.STATE_DIR / f"ovs-{run_id}-{number}")
            datapath = "system" if io["link"] == "ovs" else "netdev"
            nfs, entry_next_hop = _through_ovs(
                session, run_id, number, namespaces, generator, sink, made["switch_directory"], datapath, core
            )
        io["switch_core"] = core
    io.update(generator_interface=generator, sink_interface=sink, entry_next_hop=entry_next_hop, nfs=nfs)


def remove_chain(chain: dict) -> None:
    """Removes what build_chain made for a chain (its Open vSwitch, its namespaces, with the veths in them, and its
    root interfaces), whole or in part, once its NFs are gone (a chain removed from a service, or one the data plane
    refused); the run's journal then finds none of it."""
    made = (chain.get("io") or {}).get("made") or {}
    if made.get("switch_directory"):
        ovs_switch.stop(made["switch_directory"])
    for netns in made.get("namespaces", []):
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)
    for interface in made.get("interfaces", []):
        subprocess.run(["ip", "link", "del", interface], capture_output=True)


def _root_veth(
    session,
    name: str,
    peer: str,
    netns: str,
    peer_mac: str | None = None,
    mac: str | None = None,
    peer_up=True,
    mtu: str | None = None,
) -> None:
    """A veth from the root namespace (`name`) into `netns` (`peer`), both up (the peer left down where not
    `peer_up`: a switch's port, up once it joins its switch); of `mtu` where given (a kernel link's LINK_MTU)."""
    session.own_root_interface(name)
    ip(
        "link",
        "add",
        "name",
        name,
        *(["address", mac] if mac else []),
        *(["mtu", mtu] if mtu else []),
        "type",
        "veth",
        "peer",
        "name",
        peer,
        *(["address", peer_mac] if peer_mac else []),
        *(["mtu", mtu] if mtu else []),
        "netns",
        netns,
    )
    _without_ipv6(None, name)
    ip("link", "set", name, "up")
    if peer_up:
        ip("-n", netns, "link", "set", peer, "up")


def kernel_links(nfs: list[dict]) -> list[bool]:
    """Which links of a line of NFs (as in the run config) are veths: link k feeds NF k, the last one the sink; a link
    is kernel where an NF at either end is kernel-I/O (an NF without `io` is: its chain is kernel-I/O)."""
    kernel = [nf.get("io", "kernel") == "kernel" for nf in nfs]
    return [kernel[0], *(left or right for left, right in zip(kernel, kernel[1:], strict=False)), kernel[-1]]


def _back_to_back(session, namespaces: list[str], links: list[bool], generator: str, sink: str) -> list[dict]:
    """Generator -> in|NF|out -> in|NF|out -> ... -> sink: one veth per kernel link (`links`, as kernel_links gives
    them); the other links are rings, and an NF with none has no namespace ("")."""
    if links[0]:
        _root_veth(session, generator, "in", namespaces[0], mtu=LINK_MTU)
    for k, (left, right) in enumerate(zip(namespaces, namespaces[1:], strict=False)):
        if links[k + 1]:
            ip("-n", left, "link", "add", "name", "out", "mtu", LINK_MTU, "type", "veth",
               "peer", "name", "in", "mtu", LINK_MTU, "netns", right)  # fmt: skip
            ip("-n", left, "link", "set", "out", "up")
            ip("-n", right, "link", "set", "in", "up")
    if links[-1]:
        _root_veth(session, sink, "out", namespaces[-1], mtu=LINK_MTU)
    return [
        {"netns": netns, "in": "in" if links[k] else "", "out": "out" if links[k + 1] else "", "next_hop": ""}
        for k, netns in enumerate(namespaces)
    ]


def _through_bridge(
    session, run_id: str, chain: int, namespaces: list[str], generator: str, sink: str, core: int | None
) -> tuple[list[dict], str]:
    """Every NF, the generator and the sink on one Linux bridge in a switch namespace. The bridge forwards by
    destination MAC from static entries (no learning, no flooding): each sender addresses the next hop. With a
    `core`, the bridge's work runs there: receive packet steering (RPS) on every port of the switch hands each frame
    that enters it to that core's softirq, where the bridge forwards it."""
    switch = f"{run_id}-sw{chain}"
    session.own_netns(switch)
    _without_ipv6(switch)
    # Not through netfilter (where br_netfilter is loaded, e.g. by Docker: both the namespace's switch and the
    # bridge's must be off): it trims a frame to its IP length, and the packet's record travels after it. No IGMP
    # snooping either (the bridge would send queries into the chain).
    subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            switch,
            "sysctl",
            "-qw",
            "net.bridge.bridge-nf-call-iptables=0",
            "net.bridge.bridge-nf-call-ip6tables=0",
            "net.bridge.bridge-nf-call-arptables=0",
        ],
        capture_output=True,
    )
    ip(
        "-n",
        switch,
        "link",
        "add",
        "name",
        "switch",
        "type",
        "bridge",
        "nf_call_iptables",
        "0",
        "nf_call_ip6tables",
        "0",
        "nf_call_arptables",
        "0",
        "mcast_snooping",
        "0",
    )
    ip("-n", switch, "link", "set", "switch", "up")

    def port(name: str, mac: str) -> None:
        ip("-n", switch, "link", "set", name, "master", "switch", "up")
        subprocess.run(
            [
                "bridge",
                "-n",
                switch,
                "link",
                "set",
                "dev",
                name,
                "learning",
                "off",
                "flood",
                "off",
                "mcast_flood",
                "off",
            ],
            capture_output=True,
        )
        result = subprocess.run(
            ["bridge", "-n", switch, "fdb", "add", mac, "dev", name, "master", "static"], capture_output=True, text=True
        )
        if result.returncode != 0:
            raise SetupError(
                "cannot set up the kernel chain's bridge: "
                f"`bridge fdb add {mac} dev {name}` said: {result.stderr.strip()}"
            )

    macs = [_mac(chain, k) for k in range(len(namespaces))]
    sink_mac = _mac(chain, 255)
    _switch_ports(session, switch, namespaces, generator, sink, macs, sink_mac)
    for k in range(len(namespaces)):
        port(f"p{k}", macs[k])
    ip(
        "-n", switch, "link", "set", "pg", "master", "switch", "up"
    )  # the generator's frames only enter: no entry for it
    port("ps", sink_mac)
    if core is not None:
        ports = ["pg", "ps", *[f"p{k}" for k in range(len(namespaces))]]
        mask = format(1 << core, "x")
        script = "; ".join(f"echo {mask} > /sys/class/net/{p}/queues/rx-0/rps_cpus" for p in ports)
        result = subprocess.run(["ip", "netns", "exec", switch, "sh", "-c", script], capture_output=True, text=True)
        if result.returncode != 0:
            raise SetupError(f"cannot steer the bridge's work to core {core} (RPS): {result.stderr.strip()}")
    nfs = [
        {"netns": netns, "in": "eth", "out": "eth", "next_hop": macs[k + 1] if k + 1 < len(namespaces) else sink_mac}
        for k, netns in enumerate(namespaces)
    ]
    return nfs, macs[0]


def _switch_ports(
    session,
    switch: str,
    namespaces: list[str],
    generator: str,
    sink: str,
    macs: list[str] | None = None,
    sink_mac: str | None = None,
) -> None:
    """The veths of a switched chain: each NF's `eth` to port p<k>, the generator's and the sink's root interfaces to
    ports pg and ps of the switch namespace; all up except the switch's side, which joins its switch first."""
    for k, netns in enumerate(namespaces):
        ip(
            "-n",
            netns,
            "link",
            "add",
            "name",
            "eth",
            *(["address", macs[k]] if macs else []),
            "mtu",
            LINK_MTU,
            "type",
            "veth",
            "peer",
            "name",
            f"p{k}",
            "mtu",
            LINK_MTU,
            "netns",
            switch,
        )
        ip("-n", netns, "link", "set", "eth", "up")
    for name, port, mac in ((generator, "pg", None), (sink, "ps", sink_mac)):
        _root_veth(session, name, port, switch, mac=mac, peer_up=False, mtu=LINK_MTU)


def _through_ovs(
    session,
    run_id: str,
    chain: int,
    namespaces: list[str],
    generator: str,
    sink: str,
    directory: str,
    datapath: str,
    core: int | None,
) -> tuple[list[dict], str]:
    """Every NF, the generator and the sink on an Open vSwitch bridge of the chain's own, whose flows send each
    port's frames to the next hop's port (by in_port, as SCC steers its chains). With a `core`, ovs-vswitchd (every
    thread) is pinned there."""
    switch = f"{run_id}-sw{chain}"
    session.own_netns(switch)
    _without_ipv6(switch)
    ovs = ovs_switch.OvsSwitch(session, Path(directory), switch, datapath)
    _switch_ports(session, switch, namespaces, generator, sink)
    ports = ["pg", *[f"p{k}" for k in range(len(namespaces))], "ps"]
    for port in ports:
        ip("-n", switch, "link", "set", port, "up")
    ovs.bridge("switch", ports, list(zip(ports, ports[1:], strict=False)))
    if core is not None:
        ovs.pin(core)
    return [{"netns": netns, "in": "eth", "out": "eth", "next_hop": ""} for netns in namespaces], ""


def _interface_counters(netns: str | None, name: str) -> dict | None:
    """An interface's packet and drop counters (iproute2's stats64), or None if it is gone."""
    command = ["ip", *(["-n", netns] if netns else []), "-s", "-j", "link", "show", name]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return None
    stats = json.loads(result.stdout)[0].get("stats64", {})
    return {
        "rx_packets": stats["rx"]["packets"],
        "rx_dropped": stats["rx"]["dropped"],
        "tx_packets": stats["tx"]["packets"],
        "tx_dropped": stats["tx"]["dropped"],
    }


def interface_counters(chains: list[dict]) -> dict:
    """After a run, before its namespaces go: each kernel-I/O chain's interfaces' counters, by chain and end (the
    generator's and sink's veths, each NF's in and out), where the kernel counts its own drops beside the sockets'."""
    counters = {}
    for chain in chains:
        io = chain.get("io") or {}
        if io.get("kind") != "kernel" or "nfs" not in io:
            continue
        ends = {
            end: _interface_counters(None, io[f"{end}_interface"])
            for end in ("generator", "sink")
            if io[f"{end}_interface"]
        }
        for nf, place in zip(chain["nfs"], io["nfs"], strict=False):
            for side in ("in", "out"):
                if place[side]:  # a ring where it is empty (a DPDK NF's side in a chain that mixes them)
                    ends[f"{nf['name']}:{side}"] = _interface_counters(place["netns"], place[side])
        counters[chain["name"]] = ends
    return counters


def leftovers() -> list[str]:
    """Namespaces and root interfaces a run left behind (for the tests' machine check)."""
    found = []
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    processes = subprocess.run(
        ["pgrep", "-a", "-f", f"ovs.*{changes.STATE_DIR}"], capture_output=True, text=True
    ).stdout
    found += [f"process {line}" for line in processes.splitlines()]
    found += [f"network namespace {line.split()[0]}" for line in netns.splitlines() if line.startswith("tandem")]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(ROOT_INTERFACE_PREFIXES) and name[3:].isdigit():
            found.append(f"interface {name}")
    return found
