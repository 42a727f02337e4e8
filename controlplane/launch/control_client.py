"""The client of a service's control API (`./tandem ctl`, `tandem.connect`): HTTP/1.1 over the service's Unix socket."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

from controlplane.errors import SetupError
from controlplane.launch.control_api import Status, StopReply

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
    """A running service, reached through its control socket."""

    def __init__(self, path: Path | str = DEFAULT_SOCKET, timeout: float = 5.0):
        self.path, self.timeout = Path(path), timeout

    def _call(self, method: str, path: str) -> dict:
        connection = _UnixConnection(self.path, self.timeout)
        try:
            connection.request(method, path, body=b"" if method == "POST" else None)
            response = connection.getresponse()
            body = json.loads(response.read() or b"{}")
        except (FileNotFoundError, ConnectionRefusedError):
            raise SetupError(
                f"no Tandem service listens at {self.path} (start one with ./tandem serve SPEC, or give --socket)"
            ) from None
        except PermissionError:
            raise SetupError(f"the control socket {self.path} is its owner's alone (mode 0600): run as root") from None
        except (OSError, ValueError, http.client.HTTPException) as error:
            raise SetupError(f"the service at {self.path} did not answer: {error}") from None
        finally:
            connection.close()
        if response.status >= 400:
            raise SetupError(f"the service refused {method} {path}: {body.get('error', response.reason)}")
        return body

    def status(self) -> Status:
        return Status.model_validate(self._call("GET", "/status"))

    def stop(self) -> StopReply:
        """Asks the service to stop: its traffic ends, what is in flight drains, every machine change is undone."""
        return StopReply.model_validate(self._call("POST", "/stop"))


def connect(path: Path | str = DEFAULT_SOCKET) -> Control:
    return Control(path)
