"""A service's live changes with the links they need: a port added with a `vxlan` has its interface made (journaled)
before the data plane opens it, and removed again when the data plane refuses the port, or closes it once removed."""

from __future__ import annotations

import threading

from controlplane.errors import SetupError
from controlplane.launch.live_changes import ANSWER_SECONDS, LiveChanges
from controlplane.machine import vxlan_links
from controlplane.machine.changes import MachineSession
from controlplane.spec.live_additions import LiveAdditions


class ChangesMakingLinks:
    """Sends a service's changes as `changes` does, a VXLAN port's interface made first (on `session`)."""

    def __init__(
        self, changes: LiveChanges, session: MachineSession, additions: LiveAdditions | None, ports: list[dict]
    ):
        self.changes, self.session, self.additions = changes, session, additions
        self._lock = threading.Lock()
        self._made: dict[str, str] = {}  # port -> its interface, made for a port the data plane has not answered
        # port -> its interface, for the ports the data plane opened on a VXLAN Tandem made (`ports`: the run's)
        self._open = {port["name"]: port["vxlan"]["interface"] for port in ports if "vxlan" in port}

    def request(self, change: dict, wait_s: float = ANSWER_SECONDS) -> dict:
        port = change.get("port") if change.get("op") == "add_port" else None
        if not isinstance(port, dict) or "vxlan" not in port:
            return self.changes.request(change, wait_s)
        try:
            with self._lock:
                vxlan_links.make(self.session, port)
                self._made[port["name"]] = port["vxlan"]["interface"]
        except SetupError as error:
            if self.additions is not None:
                self.additions.forget(port["name"])
            errors = [{"path": "port.vxlan", "message": str(error)}]
            return {"op": "add_port", "port": port["name"], "state": "refused", "errors": errors}
        return self.changes.request(change, wait_s)

    def follow(self, event: dict) -> None:
        """The data plane's answer to a port: a refused one's interface is removed, an opened one's stays until the
        port is removed (or the service stops: the journal removes it)."""
        if event.get("event") != "change" or event.get("op") not in ("add_port", "remove_port"):
            return
        with self._lock:
            if event["op"] == "add_port":
                interface = self._made.pop(event.get("port"), None)
                if interface is not None and event.get("state") == "applied":
                    self._open[event["port"]] = interface
                    return
            else:
                interface = self._open.pop(event.get("port"), None) if event.get("state") == "applied" else None
        if interface is not None:
            vxlan_links.remove(interface)
