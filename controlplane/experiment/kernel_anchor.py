"""The Linux kernel doing a lab's work, the alternative a user has to Tandem: the same hosts and commands, the hosts'
veths joined by a bridge in a namespace of its own whose nftables rules equal the chains' firewalls
(controlplane/machine/nft_firewall.py). `compare` runs it beside the schedulers and reports each against it."""

from __future__ import annotations

import copy
import os
import subprocess

from controlplane.errors import SetupError
from controlplane.machine import changes, lab_network
from controlplane.machine.busy_cores import BusyCores
from controlplane.machine.kernel_links import _without_ipv6, ip
from controlplane.machine.lab_commands import LabCommands
from controlplane.machine.nft_firewall import rule_count, ruleset, untranslatable

BRIDGE = "br0"


def run_kernel(config: dict, stop_requested=None, offloads: bool = False) -> dict:
    """Runs the lab of `config` (a lab spec's run config) through the kernel's bridge and nftables; returns
    {"lab": the commands' records, "busy_cores", "seconds", "rules"}, or {"unavailable": why} where the chains have no
    kernel equivalent. `offloads`: the veths keep the kernel's default offloads (TSO, GSO, GRO: 64 KB super-frames
    cross the rules as one), which Tandem's lab turns off; without, the same veths as Tandem's. Every namespace,
    veth, rule and process is gone when it returns."""
    reason = untranslatable(config["chains"])
    if reason is not None:
        return {"unavailable": reason}
    lab = copy.deepcopy(config["lab"])
    with changes.MachineSession() as session:
        run_id = f"tandemk{os.getpid()}"
        lab_network.build(session, run_id, lab, offloads=offloads)
        bridge_netns = f"{run_id}-bridge"
        session.own_netns(bridge_netns)  # its rules and bridge go with it; the veths' root ends move into it
        _without_ipv6(bridge_netns)
        ip("-n", bridge_netns, "link", "add", BRIDGE, "type", "bridge")
        for host in lab["hosts"]:
            ip("link", "set", host["interface"], "netns", bridge_netns)
            ip("-n", bridge_netns, "link", "set", host["interface"], "master", BRIDGE, "up")
        ip("-n", bridge_netns, "link", "set", BRIDGE, "up")
        rules = ruleset(config["chains"], [host["interface"] for host in lab["hosts"]])
        loaded = subprocess.run(
            ["ip", "netns", "exec", bridge_netns, "nft", "-f", "-"], input=rules, capture_output=True, text=True
        )
        if loaded.returncode != 0:
            raise SetupError(f"nftables refused the kernel's equivalent of the chains: {loaded.stderr.strip()}")
        commands = LabCommands(session, lab)
        try:
            commands.start_servers()
            busy = BusyCores()
            commands.run_clients(stop_requested)
            busy_cores, seconds = busy.cores(), busy.seconds()
        finally:
            records = commands.stop()
    return {"lab": records, "busy_cores": busy_cores, "seconds": seconds, "rules": rule_count(config["chains"])}
