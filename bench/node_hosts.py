"""Two cluster nodes' hosts on one machine, for a node agent on each: each host is a network namespace on a LAN (a
bridge in a namespace of its own, standing for the switch, so that no rule of this machine's own firewall sees its
frames) that the machine itself joins too, where the API server and the operator run. An agent runs in its host's
network namespace and in a PID and mount namespace of its own, with its host's own /run/tandem and /run/dpdk (folders
of the machine's /run mounted there, which outlive an agent as a node's do: an agent killed leaves its journal for
the next one to undo), as in a pod: two agents then neither see each other's processes nor share a lock, a journal
or DPDK's runtime files, while they share this machine's CPUs. The addresses are in the benchmarking range
(198.18.0.0/15), never one of the machine's own network. Everything is removed on the way out, whatever the way
out."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LAN = "tdk-lan"  # the switch's namespace
MACHINE_END = "tdk-machine"  # the machine's own end of its link to the switch
MACHINE_ADDRESS = "198.18.40.254"
PREFIX_LENGTH = 24


@dataclass(frozen=True)
class NodeHost:
    node: str  # the Kubernetes Node's name
    namespace: str
    address: str  # its agent listens and advertises here; its wires run from here
    control_core: int  # its agent's control plane; the other host's NFs run there
    nf_core: int

    @property
    def run(self) -> Path:
        """The host's /run: its tandem and dpdk folders."""
        return Path(f"/run/tdk-{self.node}")

    def within(self) -> tuple[str, ...]:
        """The command an agent of this host runs under (its arguments follow): the host's network namespace, a PID
        namespace whose first process it is (every process of the agent dies with it; SIGTERM reaches it when the
        command is killed), and a mount namespace with the host's /run/tandem and /run/dpdk."""
        own_run = f"mkdir -p /run/tandem /run/dpdk && mount --bind {self.run}/tandem /run/tandem"
        own_run += f' && mount --bind {self.run}/dpdk /run/dpdk && exec "$@"'
        return (
            *("ip", "netns", "exec", self.namespace),
            *("unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGTERM"),
            *("sh", "-c", own_run, "node-host"),
        )


# Each host's NFs on a CPU of their own, its control plane on the other's.
HOSTS = (
    NodeHost("node-a", "tdk-node-a", "198.18.40.1", control_core=0, nf_core=1),
    NodeHost("node-b", "tdk-node-b", "198.18.40.2", control_core=1, nf_core=0),
)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _link_to_the_switch(end: str, switch_port: str, namespace: str | None) -> None:
    """A veth from `end` (in `namespace`, or the machine's) to `switch_port` on the LAN's bridge, both up."""
    _ip("link", "add", end, "type", "veth", "peer", "name", switch_port, "netns", LAN)
    if namespace:
        _ip("link", "set", end, "netns", namespace)
    where = ["-n", namespace] if namespace else []
    _ip(*where, "link", "set", end, "up")
    _ip("-n", LAN, "link", "set", switch_port, "master", "tdk-switch", "up")


def _remove() -> None:
    for namespace in [host.namespace for host in HOSTS] + [LAN]:
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
    subprocess.run(["ip", "link", "del", MACHINE_END], capture_output=True)
    for host in HOSTS:
        shutil.rmtree(host.run, ignore_errors=True)


@contextlib.contextmanager
def node_hosts() -> Iterator[tuple[NodeHost, ...]]:
    """The two hosts on their LAN, the machine at MACHINE_ADDRESS on it; removed on every way out."""
    _remove()
    try:
        _ip("netns", "add", LAN)
        _ip("-n", LAN, "link", "add", "tdk-switch", "type", "bridge")
        _ip("-n", LAN, "link", "set", "tdk-switch", "up")
        _link_to_the_switch(MACHINE_END, "tdk-port-m", None)
        _ip("address", "add", f"{MACHINE_ADDRESS}/{PREFIX_LENGTH}", "dev", MACHINE_END)
        for i, host in enumerate(HOSTS):
            for folder in ("tandem", "dpdk"):
                (host.run / folder).mkdir(parents=True)
            _ip("netns", "add", host.namespace)
            _ip("-n", host.namespace, "link", "set", "lo", "up")
            _link_to_the_switch(f"tdk-host-{i}", f"tdk-port-{i}", host.namespace)
            _ip("-n", host.namespace, "address", "add", f"{host.address}/{PREFIX_LENGTH}", "dev", f"tdk-host-{i}")
        yield HOSTS
    finally:
        _remove()


def signal_agent(process: subprocess.Popen, signal_number: int = signal.SIGTERM) -> None:
    """Sends the agent that `process` (a command under NodeHost.within) runs a signal: unshare waits for it with
    SIGTERM blocked, and passes a signal on only when it is killed itself. SIGKILL ends every process of the agent's
    PID namespace with it, as when a node's pod is killed."""
    try:
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
    except OSError:
        return
    for child in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(child), signal_number)
