"""The `tandem` command line: its parser, and the dispatch to a command (errors: one line, an exit status)."""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib
import io
import os
import signal
import sys
import traceback
from collections.abc import Callable

from controlplane.cli.output_paths import check_outputs
from controlplane.errors import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, SpecError, TandemError
from controlplane.launch.control_client import DEFAULT_SOCKET


def _command(module: str, name: str) -> Callable:
    """A command's handler, its module imported when the command runs: `ctl status` must not wait for the
    experiment pipeline's imports (scipy, matplotlib: seconds on a busy control core)."""

    def handler(args) -> int:
        return getattr(importlib.import_module(f"controlplane.cli.{module}"), name)(args)

    return handler


def _scheduler_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one scheduler, e.g. cfs,coop,rtc")
    return names


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be between 0 and 3600 seconds, got {text}")
    return value


def _capture_limit(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10_000_000:
        raise argparse.ArgumentTypeError(f"must be a whole number of packets from 1 to 10000000, got {text!r}")
    return int(text)


def _repeat(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 100, got {text!r}")
    return int(text)


def _instances(text: str) -> int | str:
    if text == "auto":
        return text
    if text.isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r} is neither a count nor auto")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="tandem", description="Run chains of poll-mode NFs on shared cores under NF schedulers."
    )
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run a spec once and print its results")
    run.add_argument("spec")
    run.add_argument("--scheduler", help="scheduler to use instead of the spec's")
    run.add_argument("--duration", type=_positive, help="seconds to measure (after warm-up)")
    run.add_argument("--json", metavar="PATH", help="write the full results as JSON")
    run.add_argument("--quiet", action="store_true", help="no live progress")
    run.add_argument(
        "--capture", metavar="FILE", help="write delivered packets (every chain's, as delivered) to a pcap file"
    )
    run.add_argument(
        "--capture-limit",
        metavar="N",
        type=_capture_limit,
        default=10_000,
        help="packets to capture at most (default 10000)",
    )
    run.add_argument(
        "--profile",
        action="store_true",
        help="trace the packets whose latency is sampled hop by hop: where it went "
        "(printed; ./tandem explain reads it from --json)",
    )
    run.add_argument("--plot", metavar="PATH", help="draw the auto-scaling timeline of the scaled NFs (PNG)")
    run.add_argument(
        "--metrics", metavar="[HOST]:PORT", help="serve live metrics for Prometheus while the run lasts (e.g. :9464)"
    )
    run.set_defaults(handler=_command("running", "cmd_run"))

    comp = commands.add_parser("compare", help="run a spec under several schedulers and compare medians")
    comp.add_argument("spec")
    comp.add_argument(
        "--schedulers", type=_scheduler_list, help="comma-separated; default: every scheduler (tandem nfs lists them)"
    )
    comp.add_argument("--repeat", type=_repeat, default=3)
    comp.add_argument("--duration", type=_positive, help="seconds to measure each run (after warm-up)")
    comp.add_argument("--json", metavar="PATH", help="write every run's results and the medians as JSON")
    comp.add_argument("--csv", metavar="PATH", help="write one row per run and scheduler (the table's columns) as CSV")
    comp.add_argument("--plot", metavar="PATH", help="draw throughput (every run) and latency per scheduler (PNG)")
    comp.add_argument("--quiet", action="store_true", help="no live progress")
    comp.add_argument(
        "--profile", action="store_true", help="trace packets hop by hop in every run (./tandem explain FILE)"
    )
    comp.add_argument(
        "--metrics", metavar="[HOST]:PORT", help="serve live metrics for Prometheus while the runs last (e.g. :9464)"
    )
    comp.add_argument(
        "--no-ceiling-runs",
        action="store_true",
        help="skip the rtc runs at batches 32...1024 (6 a round) that give the table its best-rtc ceiling",
    )
    comp.set_defaults(handler=_command("running", "cmd_compare"))

    validate = commands.add_parser("validate", help="check a spec without running it")
    validate.add_argument("spec")
    validate.add_argument("--scheduler", help="check with this scheduler instead of the spec's")
    validate.set_defaults(handler=_command("authoring", "cmd_validate"))

    prof = commands.add_parser(
        "profile", help="estimate each NF's cycles per packet (cached) and the switch latency of each backend"
    )
    prof.add_argument("spec")
    prof.add_argument("--refresh", action="store_true", help="measure again instead of using cached estimates")
    prof.add_argument(
        "--no-switch-latency", action="store_true", help="skip the process-controller switch-latency probe"
    )
    prof.add_argument("--json", metavar="PATH", help="write the estimates and latencies as JSON")
    prof.add_argument("--quiet", action="store_true", help="no progress messages")
    prof.set_defaults(handler=_command("inspecting", "cmd_profile"))

    prim = commands.add_parser(
        "primitives",
        help="this machine's context switch, system call, cache-line and memory latencies "
        "(SCC Table 2, Fig. 3), cached; explain uses them",
    )
    prim.add_argument("--refresh", action="store_true", help="measure again instead of reading the cache")
    prim.add_argument("--quick", action="store_true", help="fewer repetitions and working sets up to 16 MiB")
    prim.add_argument("--core", type=int, help="the core switches are measured on (default: the last)")
    prim.add_argument("--other-core", type=int, help="the cache line's other core (default: 0)")
    prim.add_argument("--json", metavar="PATH", help="write the measurement as JSON")
    prim.add_argument("--plot", metavar="PATH", help="draw memory latency by working set (PNG)")
    prim.add_argument("--quiet", action="store_true")
    prim.set_defaults(handler=_command("inspecting", "cmd_primitives"))

    place = commands.add_parser(
        "place",
        help="choose NF cores and planned rates with the placement solver (HiGHS): Bubble's "
        "most weighted throughput, or μNF's fewest cores (Bubble derives its initial batches from the planned rates)",
    )
    place.add_argument("spec")
    place.add_argument("--all", action="store_true", help="every chain must be placed whole at its offered rate")
    place.add_argument(
        "--fewest-cores",
        action="store_true",
        help="μNF-MC: every chain at its rate on as few cores as carry it, "
        "consecutive NFs that pass the most traffic together "
        "(the default where the spec says placement: fewest_cores)",
    )
    place.add_argument(
        "--time-limit",
        type=_positive,
        default=20.0,
        metavar="SECONDS",
        help="stop the search after this long with the best placement found and the gap it proved (default 20)",
    )
    place.add_argument("--json", metavar="PATH", help="write the models and the solution as JSON")
    place.add_argument("--quiet", action="store_true", help="no progress messages")
    place.set_defaults(handler=_command("inspecting", "cmd_place"))

    comp_sfc = commands.add_parser(
        "compose",
        help="compose an SFC request's VNFs into one μNF graph: say what was merged and why, "
        "write a runnable spec, draw the graph",
    )
    comp_sfc.add_argument("sfc", help="an SFC request (sfc: {vnfs, links}); run and compare accept one too")
    comp_sfc.add_argument(
        "--out", metavar="SPEC", help="where to write the composed spec (default: SFC.composed.yaml beside it)"
    )
    comp_sfc.add_argument(
        "--draw", metavar="PREFIX", help="drawings PREFIX.dot/.svg/.png (default: SFC.composed beside it)"
    )
    comp_sfc.add_argument(
        "--profile",
        action="store_true",
        help="profile the μNFs (as root) for the expected saving, instead of using cached estimates only",
    )
    comp_sfc.add_argument("--quiet", action="store_true", help="no progress messages")
    comp_sfc.set_defaults(handler=_command("authoring", "cmd_compose"))

    expl = commands.add_parser(
        "explain", help="where each packet's time went, from --profile results; with two files, what differs and why"
    )
    expl.add_argument(
        "results", nargs="+", metavar="RESULTS.json", help="one or two files of run --json or compare --json"
    )
    expl.add_argument("--scheduler", help="in a comparison, this scheduler's runs only")
    expl.add_argument("--plot", metavar="PATH", help="a stacked bar per scheduler (PNG)")
    expl.set_defaults(handler=_command("inspecting", "cmd_explain"))

    schema = commands.add_parser(
        "schema", help="print the JSON Schema of specs and SFC requests (for editors; schema/tandem.schema.json)"
    )
    schema.add_argument("--out", metavar="PATH", help="write it to PATH instead")
    schema.add_argument(
        "--crd",
        action="store_true",
        help="the ServiceChain CustomResourceDefinition for Kubernetes instead "
        "(deploy/kubernetes/crd/servicechain.yaml)",
    )
    schema.set_defaults(handler=_command("authoring", "cmd_schema"))

    serving = argparse.ArgumentParser(add_help=False)  # a service's arguments: `serve`'s, and a node agent's
    serving.add_argument("spec")
    serving.add_argument("--scheduler", help="scheduler to use instead of the spec's")
    serving.add_argument(
        "--ready-for",
        metavar="S1[:K=V,...],S2",
        default="",
        help="schedulers to be able to switch to live (`ctl scheduler`): the machine is prepared for them too, with "
        "the options given (e.g. nfvnice:cost=blackbox,unis), or their defaults",
    )
    serving.add_argument("--socket", default=str(DEFAULT_SOCKET), help=f"the control socket (default {DEFAULT_SOCKET})")
    serving.add_argument(
        "--listen",
        metavar="[HOST]:PORT",
        help="also serve the control API on TCP (default host 127.0.0.1; another host needs --token-file)",
    )
    serving.add_argument("--token-file", help="a file (mode 0600) whose token every TCP request must carry")
    serving.add_argument("--json", metavar="PATH", help="write the full results as JSON when it stops")
    serving.add_argument("--quiet", action="store_true", help="no live progress")
    serve = commands.add_parser(
        "serve",
        parents=[serving],
        help="run a spec as a service until `ctl stop`, SIGTERM or Ctrl-C, with a control API",
    )
    serve.set_defaults(handler=_command("service", "cmd_serve"))

    ctl = commands.add_parser(
        "ctl", help="ask a running service (./tandem serve) for its status, change it while traffic runs, or stop it"
    )
    reach = argparse.ArgumentParser(add_help=False)
    reach.add_argument("--socket", default=str(DEFAULT_SOCKET), help=f"the control socket (default {DEFAULT_SOCKET})")
    reach.add_argument("--connect", metavar="HOST:PORT", help="the service's TCP address instead of its socket")
    reach.add_argument("--token-file", help="the service's token, for --connect")
    reach.add_argument("--json", action="store_true", help="the reply as JSON")
    operations = ctl.add_subparsers(dest="operation", required=True, metavar="OPERATION")
    operations.add_parser("status", parents=[reach], help="chains, NFs, rates, drops, latency, the changes made")
    operations.add_parser("stop", parents=[reach], help="end the traffic, drain the chains, write the results")
    args_change = operations.add_parser(
        "args", parents=[reach], help="give an NF new arguments (e.g. firewall rules), swapped in between two batches"
    )
    args_change.add_argument("nf", help="the NF's name in the spec")
    args_change.add_argument("file", help="its new arguments, whole: a YAML or JSON mapping (- for standard input)")
    switch = operations.add_parser("scheduler", parents=[reach], help="switch the scheduler module while traffic runs")
    switch.add_argument("name", help="the scheduler (./tandem nfs lists them)")
    switch.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="one of its options (a YAML value)"
    )
    switch.add_argument(
        "--core", type=int, metavar="N", help="switch this NF core's module only; the others keep theirs (per_core)"
    )
    scale = operations.add_parser(
        "scale", parents=[reach], help="spread a scaled NF's flows over N of its prepared instances, or auto again"
    )
    scale.add_argument("nf", help="the scaled NF's name in the spec (it has scale: with max_instances)")
    scale.add_argument("instances", type=_instances, help="how many instances (1..max_instances), or auto")
    move = operations.add_parser("move", parents=[reach], help="move an NF to another core while traffic runs")
    move.add_argument("nf", help="the NF's name in the spec")
    move.add_argument("core", type=int, help="the core: any this machine gives Tandem but the control core")
    remove = operations.add_parser(
        "remove-chain", parents=[reach], help="close a chain's entry, drain it, stop its NFs; the others run on"
    )
    remove.add_argument("chain", help="the chain's name in the spec")
    add = operations.add_parser(
        "add-chain", parents=[reach], help="add a chain (its NFs started one by one) while the others' traffic runs"
    )
    add.add_argument("file", help="the chain, as a spec's chains entry: a YAML or JSON mapping (- for standard input)")
    port = operations.add_parser(
        "add-port",
        parents=[reach],
        help="open a port (a packet socket on an interface, a TAP device) for chains added after it",
    )
    port.add_argument("file", help="the port, as a spec's ports entry: a YAML or JSON mapping (- for standard input)")
    unport = operations.add_parser(
        "remove-port", parents=[reach], help="close a port no chain uses any more (remove those chains first)"
    )
    unport.add_argument("port", help="the port's name")
    ctl.set_defaults(handler=_command("service", "cmd_ctl"))

    node = commands.add_parser(
        "node",
        parents=[serving],
        help="run a cluster node's Tandem agent: a service whose cores and measured NF costs its Node reports",
    )
    node.add_argument("--node", default=os.environ.get("NODE_NAME"), help="its Node's name (default $NODE_NAME)")
    node.add_argument(
        "--advertise", metavar="HOST:PORT", help="where the operator reaches the control API (default: --listen's)"
    )
    node.add_argument("--measure", metavar="FILE", help="more NFs to measure and offer: a YAML list of {type, args}")
    node.add_argument("--kubeconfig", help="the cluster's kubeconfig (default: $KUBECONFIG, then the pod's account)")
    node.set_defaults(handler=_command("cluster", "cmd_node"))

    operator = commands.add_parser(
        "operator",
        help="run the ServiceChain operator: place ServiceChains across the cluster's Tandem nodes and keep them",
    )
    operator.add_argument(
        "--token-file", help="the token of the nodes' control APIs (a file of mode 0600; the cluster's Secret)"
    )
    operator.add_argument("--namespace", help="watch ServiceChains in this namespace only (default: every namespace)")
    operator.add_argument(
        "--time-limit",
        type=_positive,
        default=10.0,
        metavar="SECONDS",
        help="stop each placement's search after this long with the best found (default 10)",
    )
    operator.add_argument(
        "--kubeconfig", help="the cluster's kubeconfig (default: $KUBECONFIG, then the pod's service account)"
    )
    operator.add_argument(
        "--plan-only",
        action="store_true",
        help="place ServiceChains and write where in their status, without configuring any node (capacity planning)",
    )
    operator.set_defaults(handler=_command("cluster", "cmd_operator"))

    nfs = commands.add_parser("nfs", help="list NF types and schedulers with their arguments")
    nfs.add_argument("--json", action="store_true")
    nfs.set_defaults(handler=_command("authoring", "cmd_nfs"))
    return root


def main(argv: list[str] | None = None) -> int:
    # `kill -USR1` prints where every thread of this process is, on standard error, even one blocked in a system
    # call: a run that hangs says where it waits (the tests' report of a run that outlived them sends it).
    with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):  # a standard error without a file
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    args = parser().parse_args(argv)
    try:
        check_outputs(args)
        status = args.handler(args)
        sys.stdout.flush()  # inside the try: a reader that went away shows up here, not at interpreter exit
        return status
    except BrokenPipeError:
        # The reader stopped reading (`./tandem place SPEC | head`): what it wanted it has, and the handler has
        # already cleaned up. Say nothing more on the dead pipe; exit as a process killed by SIGPIPE would.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except TandemError as error:
        print(f"tandem: {error}" if not isinstance(error, SpecError) else str(error), file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("tandem: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # noqa: BLE001 - the user gets one line; TANDEM_DEBUG=1 shows the traceback
        if os.environ.get("TANDEM_DEBUG"):
            traceback.print_exc()
        print(
            f"tandem: internal error: {type(error).__name__}: {error} (TANDEM_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 1
