"""The service commands: `serve` (a spec run until `ctl stop`, SIGTERM or Ctrl-C, with a control API) and `ctl` (its
client: `status`, `stop`, and the live changes `args`, `scheduler`, `scale`, `move`, `add-chain`, `remove-chain`,
`add-port` and `remove-port`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from controlplane.cli.status_view import by_ring, status_text
from controlplane.errors import EXIT_OK, SpecError
from controlplane.launch.control_api import ChangeReply
from controlplane.launch.control_client import Control
from controlplane.launch.control_server import read_token
from controlplane.results.live_metrics import parse_listen_address
from controlplane.spec.loading import parse_yaml, read_text
from controlplane.spec.ready_for import option_pair, parse_ready_for
from controlplane.terminal.progress import say as tell_user
from controlplane.terminal.tables import count, number


def cmd_serve(args, spec=None) -> int:
    """`spec`: args.spec's spec where the caller loaded (and adapted) it already (`./tandem node`)."""
    # Here, not at the top: `ctl` (this module's other command) runs without the experiment pipeline's imports.
    from controlplane import api
    from controlplane.cli.running import report_outcome
    from controlplane.sfc.spec_or_request import load_spec_or_request
    from controlplane.terminal.progress import ProgressLine

    spec = spec if spec is not None else load_spec_or_request(args.spec, service=True)
    ready_for = parse_ready_for(args.ready_for)  # its errors before the service says it serves
    progress = None if args.quiet else ProgressLine("", None)
    tcp = f" and on TCP {args.listen} (ctl --connect)" if args.listen else ""
    tell_user(
        f"serving {spec.name}: ./tandem ctl status (or stop) on the control socket {args.socket}{tcp}; "
        "Ctrl-C or SIGTERM stop it too, after the chains drain"
    )
    outcome = api.serve(
        spec,
        args.scheduler,
        socket=args.socket,
        on_event=progress,
        source=args.spec,
        ready_for=ready_for,
        listen=args.listen,
        token_file=args.token_file,
    )
    report_outcome(args, outcome, progress)
    if outcome.exit_status != EXIT_OK:
        print(f"tandem: the service failed: {outcome.error}", file=sys.stderr)
    return outcome.exit_status


def _mapping_from(path: str, what: str) -> dict:
    """A YAML or JSON mapping from a file (- for standard input), or SpecError naming the file."""
    source = "standard input" if path == "-" else path
    text = sys.stdin.read() if path == "-" else read_text(Path(path), source, f"the file of {what}")
    document = parse_yaml(text, source)
    if not isinstance(document, dict):
        raise SpecError(source, [("", f"{what} are a mapping (name: value), not {type(document).__name__}")])
    return document


def _options(pairs: list[str]) -> dict:
    return dict(option_pair(pair, "--option") for pair in pairs)


def _report_change(args, reply: ChangeReply) -> int:
    if args.json:
        print(json.dumps(reply.model_dump(exclude_none=True), indent=2))
        return EXIT_OK
    if reply.state == "pending":
        tell_user("sent: the NF takes it before its next batch (./tandem ctl status shows it once it has)")
        return EXIT_OK
    cost = f"{number(reply.build_us, 0)} us to build" if reply.build_us is not None else ""
    if reply.switch_us is not None:
        cost = f"{number(reply.switch_us, 0)} us to switch"
    if reply.relayout:
        workers = ", ".join(worker["name"] for worker in reply.workers or [])
        moved = f"NF {reply.nf} moved from core {reply.core_before} to {reply.core}; " if reply.core is not None else ""
        staged = (
            f"new processes started beside the old in {number(reply.staged_ms, 0)} ms, then " if reply.staged_ms else ""
        )
        cost = moved + (
            f"NFs re-laid out in {workers}: {staged}the entries held {number(reply.held_ms, 0)} ms (drained in "
            f"{number(reply.drain_ms, 0)} ms, new processes {'going' if staged else 'started'} in "
            f"{number(reply.start_ms, 0)} ms)"
        )
        if reply.ring_drops_while_held is not None:
            cost += f", {count(reply.ring_drops_while_held)} packets dropped by full rings while held"
    if reply.op == "add_chain":
        cost = (
            f"NFs {reply.nfs_started} started in {number(reply.start_ms, 0)} ms and joined the run in "
            f"{number(reply.join_us, 0)} us"
        )
    if reply.op == "add_port":
        cost = f"port {reply.port} opened in {number(reply.open_us, 0)} us"
    if reply.op == "remove_port":
        received = count((reply.report or {}).get("received", 0))
        cost = f"port {reply.port} closed in {number(reply.close_us, 0)} us, having received {received} frames"
    if reply.op == "remove_chain":
        left = "everything inside delivered" if reply.drained else "what was left stays counted in flight"
        cost = f"drained in {number(reply.drain_ms, 0)} ms ({left}), NFs {reply.nfs_stopped} stopped"
    if reply.instances is not None:
        cost = f"{reply.instances_before} -> {reply.instances} instances, once every flow's old instance was done"
    tell_user(
        f"applied at t={number(reply.t_done, 2)} s: {cost}, {count(reply.ring_drops_during or 0)} packets dropped by "
        f"full rings meanwhile{by_ring(reply.ring_drops_by_ring)}"
        + ("; the NF's state (flow tables) starts empty" if reply.state_reset else "")
    )
    return EXIT_OK


def _control(args) -> Control:
    if not args.connect:
        return Control(args.socket)
    host, port = parse_listen_address(args.connect, "--connect")
    token = read_token(args.token_file) if args.token_file else None
    return Control(tcp=("127.0.0.1" if host == "0.0.0.0" else host, port), token=token)


def cmd_ctl(args) -> int:
    control = _control(args)
    if args.operation == "stop":
        control.stop()
        tell_user("stopping: the traffic ends, the chains drain, and the service writes its results")
        return EXIT_OK
    if args.operation == "args":
        return _report_change(args, control.set_args(args.nf, _mapping_from(args.file, "an NF's arguments")))
    if args.operation == "scheduler":
        return _report_change(args, control.set_scheduler(args.name, _options(args.option), args.core))
    if args.operation == "scale":
        return _report_change(args, control.set_instances(args.nf, args.instances))
    if args.operation == "move":
        return _report_change(args, control.move_nf(args.nf, args.core))
    if args.operation == "remove-chain":
        return _report_change(args, control.remove_chain(args.chain))
    if args.operation == "add-chain":
        return _report_change(args, control.add_chain(_mapping_from(args.file, "a chain's fields")))
    if args.operation == "add-port":
        return _report_change(args, control.add_port(_mapping_from(args.file, "a port's fields")))
    if args.operation == "remove-port":
        return _report_change(args, control.remove_port(args.port))
    status = control.status()
    print(json.dumps(status.model_dump(), indent=2) if args.json else status_text(status))
    return EXIT_OK
