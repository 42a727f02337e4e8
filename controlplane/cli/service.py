"""The service commands: `serve` (a spec run until `ctl stop`, SIGTERM or Ctrl-C, with a control API) and `ctl` (its
client: `status`, `stop`)."""

from __future__ import annotations

import json
import sys

from controlplane import api
from controlplane.cli.running import report_outcome
from controlplane.errors import EXIT_OK
from controlplane.launch.control_client import Control
from controlplane.sfc.spec_or_request import load_spec_or_request
from controlplane.terminal.progress import say as tell_user
from controlplane.terminal.tables import count, number, table


def cmd_serve(args) -> int:
    from controlplane.terminal.progress import ProgressLine

    spec = load_spec_or_request(args.spec)
    progress = None if args.quiet else ProgressLine("", None)
    tell_user(
        f"serving {spec.name}: ./tandem ctl status (or stop) on the control socket {args.socket}; "
        "Ctrl-C or SIGTERM stop it too, after the chains drain"
    )
    outcome = api.serve(spec, args.scheduler, socket=args.socket, on_event=progress, source=args.spec)
    report_outcome(args, outcome, progress)
    if outcome.exit_status != EXIT_OK:
        print(f"tandem: the service failed: {outcome.error}", file=sys.stderr)
    return outcome.exit_status


def cmd_ctl(args) -> int:
    control = Control(args.socket)
    if args.operation == "stop":
        control.stop()
        tell_user("stopping: the traffic ends, the chains drain, and the service writes its results")
        return EXIT_OK
    status = control.status()
    if args.json:
        print(json.dumps(status.model_dump(), indent=2))
        return EXIT_OK
    print(f"{status.name} under {status.scheduler}: {status.phase} at {status.t_s:.1f} s")
    print()
    print(
        table(
            ["chain", "in", "delivered", "Mpps now", "p50 us under", "p99 us under", "shed at entry"],
            [
                [
                    c.name,
                    count(c.generated),
                    count(c.delivered),
                    number(c.delivered_mpps, 3),
                    number(c.latency_p50_us_under, 0),
                    number(c.latency_p99_us_under, 0),
                    count(c.entry_backpressure),
                ]
                for c in status.chains
            ],
        )
    )
    print()
    print(
        table(
            ["NF", "chain", "pid", "core", "in", "Mpps now", "dropped"],
            [
                [n.name, n.chain, n.pid, n.core, count(n.packets_in), number(n.in_mpps, 3), count(n.packets_dropped)]
                for n in status.nfs
            ],
        )
    )
    if status.drops_by_ring:
        print("\nfull rings dropped: " + ", ".join(f"{ring} {count(n)}" for ring, n in status.drops_by_ring.items()))
    return EXIT_OK
