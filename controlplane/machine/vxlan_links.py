"""The VXLAN interfaces Tandem makes for its `vxlan` ports (links to other Tandem nodes), journaled as every machine
change is and removed when the run ends, whatever the way it ends."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from controlplane.errors import SetupError
from controlplane.machine.changes import MachineSession

PREFIX = "tdx-"


def interface_name(port_name: str) -> str:
    """The VXLAN interface Tandem makes for port `port_name`: `tdx-` and the name, shortened with a digest of it where
    the kernel's 15 characters do not hold it."""
    if len(PREFIX + port_name) <= 15:
        return PREFIX + port_name
    return f"{PREFIX}{port_name[:5]}-{hashlib.sha256(port_name.encode()).hexdigest()[:5]}"


def leftovers() -> list[str]:
    """VXLAN interfaces of Tandem's that a run left behind (for the tests' machine check)."""
    return [f"interface {path.name}" for path in Path("/sys/class/net").glob(PREFIX + "*")]


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True)


def make(session: MachineSession, port: dict) -> None:
    """Makes the VXLAN interface of `port` (a run config's port with `vxlan`: spec/ports.py's port_config) in
    Tandem's network namespace, up, with the config's MTU, its tunnel's socket in the namespace the spec names;
    raises SetupError with the kernel's answer. The tunnel's datagrams are 50 bytes more than the MTU (70 over IPv6):
    an underlay with a smaller MTU fragments them (the kernel's VXLAN leaves DF unset): it costs, and loses none."""
    vxlan = port["vxlan"]
    name = vxlan["interface"]
    session.own_root_interface(name)  # journaled before it exists: a run killed on the way leaves nothing
    tunnel = ["id", str(vxlan["vni"]), "remote", vxlan["remote"], "dstport", str(vxlan["dstport"]), "nolearning"]
    if vxlan.get("local"):
        tunnel += ["local", vxlan["local"]]
    where = ["-n", vxlan["namespace"]] if vxlan.get("namespace") else []
    made = _ip(*where, "link", "add", name, "mtu", str(vxlan["mtu"]), "type", "vxlan", *tunnel)
    if made.returncode != 0:
        raise SetupError(f"cannot make the VXLAN {name} of port {port['name']}: {made.stderr.strip()}")
    if where:
        # Into our namespace; the tunnel's socket stays where the interface was made (the kernel keeps its netns).
        moved = _ip(*where, "link", "set", name, "netns", str(os.getpid()))
        if moved.returncode != 0:
            _ip(*where, "link", "del", name)
            raise SetupError(f"cannot bring the VXLAN {name} of port {port['name']} here: {moved.stderr.strip()}")
    # No IPv6 on it: the kernel would send its own router solicitations and reports down the wire.
    Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1")
    up = _ip("link", "set", name, "up")
    if up.returncode != 0:
        remove(name)
        raise SetupError(f"cannot bring the VXLAN {name} of port {port['name']} up: {up.stderr.strip()}")


def remove(name: str) -> None:
    """Removes a VXLAN interface made for a port the data plane did not take (its journal entry then finds none)."""
    _ip("link", "del", name)


def make_all(session: MachineSession, ports: list[dict]) -> None:
    """Makes the VXLAN of every port of the run config that has one, before the data plane opens them."""
    for port in ports:
        if "vxlan" in port:
            make(session, port)
