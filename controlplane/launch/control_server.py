"""The control API of a running service (`./tandem serve`): HTTP/1.1 with JSON bodies on a Unix socket of mode 0600,
so that only its owner (root, who started the run) can reach it, and on request on a TCP address too: loopback, or any
address with a token every request must carry. The standard library's HTTP server is enough for a
local socket and two requests; the replies are the pydantic models of control_api.py, whose OpenAPI document the
socket serves at /openapi.json. Every request is answered, a malformed one with a 4xx naming what is wrong; nothing a
request carries is ever executed or read as a path."""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import socket
import socketserver
import stat
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from pydantic import ValidationError

from controlplane.errors import SetupError, SpecError
from controlplane.launch.control_api import REQUESTS, ROUTES, ChangeReply, ErrorReply, StopReply, match_route, openapi
from controlplane.launch.live_changes import LiveChanges
from controlplane.launch.live_links import ChangesMakingLinks
from controlplane.launch.service_status import ServiceStatus
from controlplane.machine import switch_costs
from controlplane.spec import catalog
from controlplane.spec.live_additions import LiveAdditions

MAX_BODY = 64 << 10  # room for a rule set of a thousand rules; a larger body is refused
# A larger body up to this is read and thrown away before the refusal, so that a client still sending it gets the
# reply instead of a reset connection; beyond it, the connection is closed unread.
MAX_DRAINED = 1 << 20


class _UnixHttpServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True  # a client that hangs does not keep the service from ending


class _TcpHttpServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True  # a service started again at once gets its port back


class _Tcp6HttpServer(_TcpHttpServer):
    address_family = socket.AF_INET6


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_token_beyond_loopback(host: str, has_token: bool) -> None:
    """A TCP listener on any address but a loopback one only with a token: SetupError naming --listen otherwise."""
    if not has_token and not is_loopback(host):
        raise SetupError(f"--listen {host}: a control API beyond this machine needs a token (--token-file)")


class ControlServer:
    """Serves `status` from the run's ServiceStatus, turns `stop` into `on_stop()` and hands live changes to
    `changes`, a chain or a port to add checked and made by `additions` first; closed with the run. On a Unix socket
    of mode 0600 (this constructor), or on a TCP address (`on_tcp`) where every request must carry the token."""

    def __init__(
        self,
        path: Path | None,
        status: ServiceStatus,
        on_stop: Callable[[], None],
        changes: LiveChanges | ChangesMakingLinks,
        *,
        tcp: tuple[str, int] | None = None,
        token: str | None = None,
        additions: LiveAdditions | None = None,
    ):
        self.path = path
        handler = _handler(status, on_stop, changes, token, additions)
        if tcp is not None:
            host, port = tcp
            kind = _Tcp6HttpServer if ":" in host else _TcpHttpServer
            try:
                self._server = kind((host, port), handler)
            except OSError as error:
                raise SetupError(f"--listen: cannot listen on {host}:{port}: {error.strerror or error}") from None
        else:
            if path.is_socket():  # a killed service's (MachineSession.own_socket refuses any other file)
                path.unlink()
            previous = os.umask(0o177)  # the socket is made 0600: no moment at which another user could connect
            try:
                self._server = _UnixHttpServer(str(path), handler)
            finally:
                os.umask(previous)
        self._thread = threading.Thread(target=self._server.serve_forever, name="control-api", daemon=True)
        self._thread.start()

    @classmethod
    def on_tcp(cls, host: str, port: int, token: str | None, status, on_stop, changes, additions=None) -> ControlServer:
        """A TCP listener: on a loopback address with or without a token, on any other only with one."""
        require_token_beyond_loopback(host, token is not None)
        return cls(None, status, on_stop, changes, tcp=(host, port), token=token, additions=additions)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self.path is not None and self.path.is_socket():
            self.path.unlink()


def read_token(path: str | Path) -> str:
    """A token file's token: the file is its owner's alone (like an SSH key), or readable besides by a group this
    process is in and no one else (a Kubernetes Secret mounted for a non-root pod: root's file, group-readable by the
    pod's fsGroup; PostgreSQL allows its key file the same way), and holds at least 16 characters."""
    path = Path(path)
    try:
        found = path.stat()
        mode = found.st_mode
        if not stat.S_ISREG(mode):
            raise SetupError(f"--token-file {path}: not a regular file")
        ours = found.st_gid in (os.getegid(), *os.getgroups())
        if mode & (0o037 if ours else 0o077):
            raise SetupError(f"--token-file {path}: others may read it (mode {stat.S_IMODE(mode):04o}); chmod 600 it")
        token = path.read_text().strip()
    except OSError as error:
        raise SetupError(f"--token-file {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise SetupError(f"--token-file {path}: not text") from None
    if len(token) < 16 or any(c.isspace() for c in token):
        raise SetupError(f"--token-file {path}: a token is one word of 16 characters or more (openssl rand -hex 16)")
    return token


def _body_field(manager_path: str, template: str) -> str:
    """Where in the request a field the data plane refused is: its paths are the command's (args.rules[0].action,
    scheduler.options.k, nf, chain.nfs[0].core), the request's are the body's or the URL's."""
    if manager_path in ("", "request"):
        return "request"
    if manager_path in ("nf", "chain") and template != "/chains":
        return "path"
    if manager_path == "scheduler":
        return "body"
    return "body." + manager_path.removeprefix("scheduler.")


def _scheduler_options(name: str, options: dict, running: dict) -> dict:
    """A live switch's options: a scheduler that takes the switch-cost options (auto) gets this machine's cached
    switches where the request leaves them unset, as a run's start does (experiment/pipeline.py)."""
    takes = {
        option["name"]
        for known in catalog.catalog()["schedulers"]
        if known["name"] == name
        for option in known["options"]
    }
    return switch_costs.cached_into(options, running) if set(switch_costs.MEASURED_OPTIONS) <= takes else options


def _as_command(template: str, params: dict, request, additions: LiveAdditions | None, running: dict) -> dict:
    if template in ("/chains", "/ports") and additions is None:
        raise SpecError("the request", [("request", "this service takes no new chains or ports")])
    if template == "/chains":
        return {"op": "add_chain", "chain": additions.chain(request.chain)}
    if template == "/ports":
        return {"op": "add_port", "port": additions.port(request.port)}
    if template == "/scheduler":
        options = _scheduler_options(request.name, request.options, running)
        scheduler = {"name": request.name, "options": options}
        return {
            "op": "set_scheduler",
            "scheduler": scheduler | ({} if request.core is None else {"core": request.core}),
        }
    if template == "/nfs/{name}/instances":
        return {"op": "set_instances", "nf": params["name"], "instances": request.instances}
    if template == "/nfs/{name}/core":
        return {"op": "move_nf", "nf": params["name"], "core": request.core}
    if template == "/chains/{name}":
        return {"op": "remove_chain", "chain": params["name"]}
    if template == "/ports/{name}":
        if additions is not None:
            additions.removable(params["name"])
        return {"op": "remove_port", "port": params["name"]}
    return {"op": "set_args", "nf": params["name"], "args": request.args}


def _handler(
    status: ServiceStatus,
    on_stop: Callable[[], None],
    changes: LiveChanges | ChangesMakingLinks,
    token: str | None,
    additions: LiveAdditions | None,
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # the service's terminal shows its progress, not every request
            pass

        def _reply(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self, code: int, field: str, message: str) -> None:
            self.close_connection = True  # whatever of the request is left unread is not taken for another one
            self._reply(code, ErrorReply(error=message, field=field).model_dump())

        def _drain(self) -> None:
            """Reads and throws away a body up to MAX_DRAINED, so that a client still sending it gets the refusal
            instead of a reset connection."""
            length = self.headers.get("Content-Length", "0") if getattr(self, "headers", None) else "0"
            left = int(length) if length.isdigit() and int(length) <= MAX_DRAINED else 0
            while left > 0 and (chunk := self.rfile.read(min(65536, left))):
                left -= len(chunk)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            # What the standard library refuses before a route is reached (a malformed request line or header, a
            # method it has no handler for): answered in the API's own form, not as an HTML page.
            if code == 501:
                self._drain()
                self._refuse(
                    405, "method", f"no operation takes {self.command!r} (they take GET, POST, PUT and DELETE)"
                )
            else:
                self._refuse(code, "request", message or explain or "malformed request")

        def _route(self, method: str) -> None:
            if token is not None:
                given = self.headers.get("Authorization", "")
                if not hmac.compare_digest(given.encode(errors="replace"), f"Bearer {token}".encode()):
                    self._drain()
                    return self._refuse(401, "authorization", "this API needs its token (Authorization: Bearer ...)")
            length = self.headers.get("Content-Length", "0")
            if not length.isdigit() or int(length) > MAX_BODY:
                self._drain()
                return self._refuse(413, "body", f"a request body is at most {MAX_BODY} bytes")
            body = self.rfile.read(int(length)) if int(length) else b""
            path, query = self.path.split("?", 1) if "?" in self.path else (self.path, "")
            if query:
                return self._refuse(400, "query", f"{path} takes no arguments")
            route = match_route(path)
            if route is None:
                return self._refuse(404, "path", f"no such operation {path[:64]!r} (there are: {', '.join(ROUTES)})")
            template, params = route
            if ROUTES[template] != method:
                return self._refuse(405, "method", f"{template} takes {ROUTES[template]}, not {method}")
            if template in REQUESTS:
                return self._change(template, params, body)
            if body.strip() not in (b"", b"{}"):
                return self._refuse(400, "body", f"{path} takes no arguments")
            if path == "/status":
                return self._reply(200, status.status())
            if path == "/openapi.json":
                return self._reply(200, openapi())
            self._reply(202, StopReply(stopping=True).model_dump())
            on_stop()

        def _change(self, template: str, params: dict, body: bytes) -> None:
            try:
                # No body: null, which a request with fields refuses by name; one without takes it as {}.
                empty = b"{}" if not REQUESTS[template].model_fields else b"null"
                request = REQUESTS[template].model_validate_json(body or empty)
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                return self._refuse(400, f"body.{where}" if where else "body", f"{first['msg']} ({template})")
            try:
                answer = ChangeReply.model_validate(
                    changes.request(_as_command(template, params, request, additions, status.started_with))
                )
            except SpecError as error:  # a chain or port to add that cannot be: refused as the data plane refuses
                errors = [{"path": path, "message": message} for path, message in error.problems]
                op = {"/ports": "add_port", "/ports/{name}": "remove_port"}.get(template, "add_chain")
                answer = ChangeReply(op=op, state="refused", errors=errors)
            if answer.state == "refused":
                first = answer.errors[0] if answer.errors else {"path": "request", "message": "refused"}
                self.close_connection = True
                reply = ErrorReply(error=first["message"], field=_body_field(first["path"], template)).model_dump()
                return self._reply(409 if first["path"] == "request" else 422, reply | {"errors": answer.errors})
            self._reply(200 if answer.state == "applied" else 202, answer.model_dump(exclude_none=True))

        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            self._route("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._route("POST")

        def do_PUT(self) -> None:  # noqa: N802
            self._route("PUT")

        def do_DELETE(self) -> None:  # noqa: N802
            self._route("DELETE")

        def do_HEAD(self) -> None:  # noqa: N802 - refused with a body all the same: no operation takes HEAD
            self._route("HEAD")

    return Handler
