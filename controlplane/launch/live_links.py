"""A service's live changes with what they need of the machine: a port added with a `vxlan` has its interface made
(journaled) before the data plane opens it, and a chain added with kernel-I/O NFs its namespaces and veths before the
data plane starts its NFs, each removed again when the data plane refuses the change or once the port or the chain
is removed; an NF moved to a core none of the service's NFs had gets the core reserved for the NFs (as the service's
cores were at its start) once the move is applied."""

from __future__ import annotations

import threading

from controlplane.errors import SetupError
from controlplane.launch.live_changes import ANSWER_SECONDS, LiveChanges
from controlplane.machine import kernel_links, vxlan_links
from controlplane.machine.changes import MachineSession
from controlplane.machine.cores import usable_cores
from controlplane.spec.live_additions import LiveAdditions


def _kernel(chain: dict) -> bool:
    return (chain.get("io") or {}).get("kind") == "kernel"


class ChangesMakingLinks:
    """Sends a service's changes as `changes` does, a VXLAN port's interface and a kernel-I/O chain's namespaces made
    first (on `session`). `config`: the running config (its run id, what the machine was prepared for, its chains
    and ports as made at the start)."""

    def __init__(self, changes: LiveChanges, session: MachineSession, additions: LiveAdditions | None, config: dict):
        self.changes, self.session, self.additions = changes, session, additions
        self._run_id = config["paths"]["file_prefix"]
        # Where a switched chain's switch runs, as the scheduler asked when the machine was prepared (scc's
        # switch_core); the kernel decides where it did not.
        prepared = config.get("prepared", {}).get("kernel_links")
        self._switch_core = prepared.get("switch_core") if isinstance(prepared, dict) else None
        self._lock = threading.Lock()
        self._made: dict[str, str] = {}  # port -> its interface, made for a port the data plane has not answered
        # port -> its interface, for the ports the data plane opened on a VXLAN Tandem made
        self._open = {port["name"]: port["vxlan"]["interface"] for port in config.get("ports", []) if "vxlan" in port}
        # Kernel-I/O chains by name: those whose links were made for a request not answered yet, and those running.
        self._chains_made: dict[str, dict] = {}
        self._chains_running = {chain["name"]: chain for chain in config["chains"] if _kernel(chain)}
        self._chain_numbers = len(config["chains"])  # each chain's root interfaces and switch are named by one
        # The cores reserved for the NFs: those they were given at the start (runner.py), and those moved to since.
        self._control_core = config["control_core"]
        self._reserved = {nf["core"] for chain in config["chains"] for nf in chain["nfs"]}

    def request(self, change: dict, wait_s: float = ANSWER_SECONDS) -> dict:
        if change.get("op") == "move_nf":
            return self._move(change, wait_s)
        if change.get("op") == "add_chain" and isinstance(change.get("chain"), dict) and _kernel(change["chain"]):
            return self._add_kernel_chain(change, wait_s)
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

    def _add_kernel_chain(self, change: dict, wait_s: float) -> dict:
        chain = change["chain"]
        refusal = {"op": "add_chain", "chain": chain["name"], "state": "refused"}
        with self._lock:
            number, self._chain_numbers = self._chain_numbers, self._chain_numbers + 1
            try:
                kernel_links.build_chain(self.session, self._run_id, number, chain, self._switch_core)
            except SetupError as error:
                kernel_links.remove_chain(chain)
                return refusal | {"errors": [{"path": "chain.io", "message": str(error)}]}
            self._chains_made[chain["name"]] = chain
        return self.changes.request(change, wait_s)

    def _move(self, change: dict, wait_s: float) -> dict:
        """An NF to another core: the machine must give Tandem that core, and it must not be the control core; the
        data plane checks the rest (one it has not run NFs on, too, told that this was checked)."""
        core, usable = change.get("core"), usable_cores()
        problem = None
        if core == self._control_core:
            problem = (
                f"core {core} is the control core (the generator, the sink, the manager's loop): NFs run elsewhere"
            )
        elif core not in usable:
            problem = f"core {core} is not one this machine gives Tandem (cores {', '.join(map(str, sorted(usable)))})"
        if problem is not None:
            errors = [{"path": "core", "message": problem}]
            return {"op": "move_nf", "nf": change.get("nf"), "state": "refused", "errors": errors}
        return self.changes.request(change | {"machine_core": True}, wait_s)

    def follow(self, event: dict) -> None:
        """The data plane's answer to a port or a chain: a refused one's links are removed; an opened port's and an
        added chain's stay until it is removed (or the service stops: the journal removes them). An NF moved to a
        core not reserved yet: it is reserved now (given back when the service stops, as the others)."""
        if event.get("event") != "change":
            return
        if event.get("op") == "move_nf":
            if event.get("state") == "applied" and event.get("core") not in self._reserved:
                with self._lock:
                    self.session.reserve_cores({event["core"]})
                    self._reserved.add(event["core"])
            return
        if event.get("op") in ("add_chain", "remove_chain"):
            self._follow_chain(event)
            return
        if event.get("op") not in ("add_port", "remove_port"):
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

    def _follow_chain(self, event: dict) -> None:
        name, applied = event.get("chain"), event.get("state") == "applied"
        with self._lock:
            if event["op"] == "add_chain":
                chain = self._chains_made.pop(name, None)
                if chain is not None and applied:
                    self._chains_running[name] = chain
                    return
            else:
                chain = self._chains_running.pop(name, None) if applied else None
        if chain is not None:  # its NFs are gone: nothing uses its namespaces any more
            kernel_links.remove_chain(chain)
