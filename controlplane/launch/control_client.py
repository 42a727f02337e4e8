"""The client of a service's control API (`./tandem ctl`, `tandem.connect`): HTTP/1.1 over the service's Unix socket."""

from __future__ import annotations

import http.client
import json
import socket
import time
from pathlib import Path

from controlplane.errors import SetupError
from controlplane.launch.control_api import ChangeReply, Status, StopReply

# Where `./tandem serve` listens unless told otherwise; the service's directory, removed when it ends.
DEFAULT_SOCKET = Path("/run/tandem/control/tandem.sock")


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(str(self._path))


class Control:
    """A running service, reached through its control socket, or through its TCP address (`tcp`: host, port) with
    its token."""

    def __init__(
        self,
        path: Path | str = DEFAULT_SOCKET,
        timeout: float = 15.0,  # a change waits up to 5 s
        *,
        tcp: tuple[str, int] | None = None,
        token: str | None = None,
    ):
        self.path, self.timeout, self.tcp, self.token = Path(path), timeout, tcp, token

    def _where(self) -> str:
        return f"{self.tcp[0]}:{self.tcp[1]}" if self.tcp else str(self.path)

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        if self.tcp:
            connection = http.client.HTTPConnection(*self.tcp, timeout=self.timeout)
        else:
            connection = _UnixConnection(self.path, self.timeout)
        data = json.dumps(body).encode() if body is not None else (b"" if method in ("POST", "PUT") else None)
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            reply = json.loads(response.read() or b"{}")
        except (FileNotFoundError, ConnectionRefusedError):
            raise SetupError(
                f"no Tandem service listens at {self._where()} (start one with ./tandem serve SPEC, or give --socket)"
            ) from None
        except PermissionError:
            raise SetupError(f"the control socket {self.path} is its owner's alone (mode 0600): run as root") from None
        except (OSError, ValueError, http.client.HTTPException) as error:
            raise SetupError(f"the service at {self._where()} did not answer: {error}") from None
        finally:
            connection.close()
        if response.status >= 400:
            field = f" ({reply['field']})" if reply.get("field") not in (None, "request") else ""
            raise SetupError(f"the service refused {method} {path}{field}: {reply.get('error', response.reason)}")
        return reply

    def status(self) -> Status:
        return Status.model_validate(self._call("GET", "/status"))

    def stop(self) -> StopReply:
        """Asks the service to stop: its traffic ends, what is in flight drains, every machine change is undone."""
        return StopReply.model_validate(self._call("POST", "/stop"))

    def set_args(self, nf: str, args: dict) -> ChangeReply:
        """Gives NF `nf` (and its scaled instances) new arguments, whole, while traffic runs: checked as the spec's
        are, built beside the running instance and swapped in between two batches. Refused (SetupError naming the
        field) when they are wrong; `pending` while the NF has not run a batch since."""
        return ChangeReply.model_validate(self._call("PUT", f"/nfs/{nf}/args", {"args": args}))

    def set_scheduler(self, name: str, options: dict | None = None, core: int | None = None) -> ChangeReply:
        """Switches the scheduler module while traffic runs: every core's, or core `core`'s alone (the others keep
        theirs, and the service runs per_core); one of another layout re-lays the NFs out, nothing lost."""
        body = {"name": name, "options": options or {}} | ({} if core is None else {"core": core})
        return ChangeReply.model_validate(self._call("PUT", "/scheduler", body))

    def set_instances(self, nf: str, instances: int | str) -> ChangeReply:
        """Spreads scaled NF `nf`'s flows over `instances` of its prepared instances (its rule paused), or gives the
        count back to its rule (`auto`); applied once every feeder moved the flows, `pending` until then."""
        return ChangeReply.model_validate(self._call("PUT", f"/nfs/{nf}/instances", {"instances": instances}))

    def move_nf(self, nf: str, core: int) -> ChangeReply:
        """Moves NF `nf` to `core` (any the machine gives Tandem but the control core) while traffic runs: the entries
        held, the NFs drained, their processes started again as the running scheduler lays them out with `nf` on
        `core`."""
        return ChangeReply.model_validate(self._call("PUT", f"/nfs/{nf}/core", {"core": core}))

    def remove_chain(self, chain: str) -> ChangeReply:
        """Removes a chain while the others' traffic runs: its entry closed, what is inside drained to the sink, its
        NF processes stopped; `pending` until they are."""
        return ChangeReply.model_validate(self._call("DELETE", f"/chains/{chain}", {}))

    def answer_of(self, reply: ChangeReply, timeout_s: float = 120.0) -> ChangeReply:
        """A change's answer: `reply` itself, or, where it was `pending` (the data plane answers later: a build at
        nice 19 on a busy control core, an NF that runs no batch), the change as `status` lists it once answered;
        still `pending` after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while reply.state == "pending" and time.monotonic() < deadline:
            time.sleep(0.1)
            listed = [c for c in self.status().changes if c.get("id") == reply.id and c.get("state") != "pending"]
            if listed:
                return ChangeReply.model_validate(listed[0])
        return reply

    def add_chain(self, chain: dict) -> ChangeReply:
        """Adds a chain (a spec's `chains` entry) while the others' traffic runs: checked as if the spec had had it,
        its NF processes started one by one, then joined to the run; `pending` until they are."""
        return ChangeReply.model_validate(self._call("POST", "/chains", {"chain": chain}))

    def add_port(self, port: dict) -> ChangeReply:
        """Adds a port (a spec's `ports` entry: a packet socket on an interface, a TAP device) to the running service:
        chains added after it may take from it and send to it."""
        return ChangeReply.model_validate(self._call("POST", "/ports", {"port": port}))

    def remove_port(self, port: str) -> ChangeReply:
        """Removes a port no chain uses any more (remove them first): its device closed, its counters kept in the
        results, a VXLAN Tandem made for it removed."""
        return ChangeReply.model_validate(self._call("DELETE", f"/ports/{port}", {}))


def connect(path: Path | str = DEFAULT_SOCKET) -> Control:
    return Control(path)
