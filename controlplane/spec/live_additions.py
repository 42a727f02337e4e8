"""What a running service checks a chain or a port added live against: its spec with the ports added to it so far,
and the running config (the ports' indexes as the data plane numbers them, the NF costs measured at the start)."""

from __future__ import annotations

import threading

from controlplane.errors import SpecError
from controlplane.spec.deployment import KnownCosts, added_chain_config
from controlplane.spec.models import ChainSpec, Spec
from controlplane.spec.port_models import PortSpec
from controlplane.spec.ports import VIRTUAL_DRIVERS, port_config, port_problems

# The drivers a port added by a request may use: each opens an interface (net_af_packet) or makes its own (net_tap,
# gone with the service's process) or none. net_pcap and net_memif read or make the files their arguments name, and a
# request may not make Tandem read a file for the requester; net_af_xdp loads a program into the interface's driver.
# Those go in the spec, as a PCI device does (DPDK probes it as the service starts).
LIVE_DRIVERS = ("net_af_packet", "net_tap", "net_null", "net_ring")


class LiveAdditions:
    """Checks chains and ports to add to the service of `spec`, whose data plane runs `running`; follows the
    service's events so that a port the data plane opened is one that later chains may name."""

    def __init__(self, spec: Spec, running: dict, known_costs: KnownCosts | None = None):
        self.spec = spec
        self.running = running
        self.known_costs = known_costs  # NFs' costs measured before (the profiler's cache), or None
        self._lock = threading.Lock()  # requests come on the control API's threads, events on the run's
        self._added: list[PortSpec] = []
        self._removed: set[str] = set()  # ports removed: no later chain may name them (their names stay taken)
        # By name: ports sent to the data plane, not answered yet (their config, their spec).
        self._pending: dict[str, tuple[dict, PortSpec]] = {}

    def chain(self, chain: ChainSpec) -> dict:
        """The chain as the data plane takes it; raises SpecError naming its fields (spec/deployment.py)."""
        with self._lock:
            ports = [port for port in [*self.spec.ports, *self._added] if port.name not in self._removed]
            spec = self.spec.model_copy(update={"ports": ports})
        return added_chain_config(spec, chain, self.running, self.known_costs)

    def removable(self, name: str) -> None:
        """Raises SpecError where the port `name` is not for a request to remove: a lab host's (the lab's veth goes
        with the lab). The data plane refuses a port a chain still uses."""
        if self.spec.lab is not None and name in {host.name for host in self.spec.lab.hosts}:
            raise SpecError("the port", [("port", f"{name!r} is a lab host's port: it goes with the lab")])

    def port(self, port: PortSpec) -> dict:
        """The port as the data plane takes it, checked as a spec's `ports` entry; raises SpecError naming its
        fields under `port`."""
        with self._lock:
            taken = {known["name"] for known in self.running.get("ports", [])} | set(self._pending)
            if port.name in taken:
                raise SpecError("the port", [("port.name", f"a port named {port.name!r} is in the service")])
            config = port_config(port, "port")
            driver = next((known for known in VIRTUAL_DRIVERS if config["device"].startswith(known)), None)
            if driver is not None and driver not in LIVE_DRIVERS:
                raise SpecError(
                    "the port",
                    [("port.device", f"{driver} is not added live ({', '.join(LIVE_DRIVERS)} are): give it in the "
                                     "spec's ports")],
                )  # fmt: skip
            spec = self.spec.model_copy(update={"ports": [*self.spec.ports, *self._added, port]})
            where = f"ports[{len(spec.ports) - 1}]"
            problems = [
                ("port" + path.removeprefix(where), message)
                for path, message in port_problems(spec)
                if path == where or path.startswith(where + ".")
            ]
            if problems:
                raise SpecError("the port", problems)
            if driver is None:  # port_problems found it a PCI device bound to a DPDK driver
                raise SpecError(
                    "the port",
                    [("port.device", "a PCI device is probed as the service starts: give it in the spec's ports")],
                )
            self._pending[port.name] = (config, port)
            return config

    def forget(self, name: str) -> None:
        """A port checked here that never reached the data plane (its link could not be made): its name is free."""
        with self._lock:
            self._pending.pop(name, None)

    def follow(self, event: dict) -> None:
        """A run's event: a port the data plane opened joins the running config (its index the next), and the spec
        chains are checked against; a refused one is forgotten; a removed one no chain may name any more."""
        if event.get("event") != "change" or event.get("op") not in ("add_port", "remove_port"):
            return
        if event["op"] == "remove_port":
            if event.get("state") == "applied":
                with self._lock:
                    self._removed.add(event.get("port"))
            return
        with self._lock:
            pending = self._pending.pop(event.get("port"), None)
            if pending is None or event.get("state") != "applied":
                return
            config, port = pending
            self.running.setdefault("ports", []).append(config)
            self._added.append(port)
