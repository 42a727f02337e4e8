"""The commands that run a spec: run (once) and compare (under several schedulers)."""

from __future__ import annotations

import sys
from pathlib import Path

from controlplane import api
from controlplane.cli.common import check_scheduler_options, write_json, write_text
from controlplane.errors import EXIT_INTERRUPTED, EXIT_OK, SpecError
from controlplane.results.comparison_report import comparison_csv, comparison_report
from controlplane.results.live_metrics import parse_listen_address
from controlplane.results.run_report import run_report
from controlplane.sfc.spec_or_request import load_spec_or_request
from controlplane.spec.topology import chain_nodes
from controlplane.terminal.progress import say as tell_user


def _capture(path: str, limit: int) -> dict:
    """The data plane's capture settings, once the file is known to be writable (bad input: exit 2, before the run)."""
    target = Path(path).resolve()
    try:
        with open(target, "wb"):
            pass
    except OSError as error:
        raise SpecError("--capture", [("", f"cannot write {path}: {error.strerror}")]) from None
    return {"path": str(target), "limit": limit}


def metrics_place(listen: str) -> str:
    """Where --metrics serves, checked before it is announced (bad input: exit 2); `:PORT` is every interface."""
    host, port = parse_listen_address(listen)
    if host == "0.0.0.0":
        return f"every interface, port {port} (give 127.0.0.1:{port} for this machine alone)"
    return f"{host}:{port}"


def report_outcome(args, outcome, progress) -> dict | None:
    """A run's ending as the user sees it: the progress line closed, the notes, the results written (--json) and
    printed; returns the results, if any."""
    if progress:
        progress.finish()
    for note in outcome.notes:
        print(f"note: {note}", file=sys.stderr)
    if outcome.results is None:
        return None
    results = outcome.results.as_json()
    # Files first: a reader of stdout that goes away (`| head`) must not cost the user the JSON.
    if args.json:
        write_json(args.json, dict(results, spec=args.spec, exit_status=outcome.exit_status))
    print(run_report(results))
    return results


def cmd_run(args) -> int:
    from controlplane.terminal.progress import ProgressLine

    spec = load_spec_or_request(args.spec)
    if args.plot and not any(nf.scale for chain in spec.chains for nf in chain_nodes(chain)):
        raise SpecError(
            args.spec, [("--plot", "draws the auto-scaling timeline, and this spec scales no NF (give one `scale`)")]
        )
    capture = _capture(args.capture, args.capture_limit) if args.capture else None
    duration = args.duration if args.duration is not None else spec.duration
    # Chains fed by ports run until Ctrl-C, or, in a lab, until its clients are done: no total to show.
    total = None if duration is None or spec.lab is not None else spec.warmup + duration
    progress = None if args.quiet else ProgressLine("", total)
    if duration is None and spec.lab is None and not args.quiet:
        tell_user("forwarding between the ports until Ctrl-C (or SIGTERM); then the chains drain, and the results")
    if args.metrics and not args.quiet:
        place = metrics_place(args.metrics)
        tell_user(f"serving live metrics on {place} (Prometheus' format, at /metrics) while the run lasts")
    outcome = api.run(
        spec,
        args.scheduler,
        args.duration,
        capture=capture,
        metrics=args.metrics,
        on_event=progress,
        profile=args.profile,
        source=args.spec,
    )
    results = report_outcome(args, outcome, progress)
    if results is not None:
        if args.plot:
            from controlplane.results.plot import plot_scaling

            plot_scaling(results, args.plot)
        if args.profile:
            from controlplane.machine.primitive_latencies import cached
            from controlplane.results.explain import explain

            print("\n" + explain(results, args.spec, cached()))
    if outcome.exit_status != EXIT_OK:
        partial = " (partial results above)" if outcome.results is not None else ""
        print(f"tandem: run failed: {outcome.error}{partial}", file=sys.stderr)
    return outcome.exit_status


def cmd_compare(args) -> int:
    spec = load_spec_or_request(args.spec)
    check_scheduler_options(spec, args.spec)
    if args.metrics and not args.quiet:
        place = metrics_place(args.metrics)
        tell_user(f"serving live metrics on {place} (Prometheus' format, at /metrics) while the runs last")
    result = api.compare(
        spec,
        args.schedulers,
        args.repeat,
        args.duration,
        metrics=args.metrics,
        quiet=args.quiet,
        profile=args.profile,
        ceiling=not args.no_ceiling_runs,
        source=args.spec,
    )
    comparison = result.as_json()
    status = result.exit_status
    if args.json:  # files first, as in cmd_run
        write_json(args.json, comparison)
    if args.csv:
        write_text(args.csv, comparison_csv(comparison))
    if args.plot:
        from controlplane.results.plot import plot_comparison

        plot_comparison(comparison, args.plot)
    print(comparison_report(comparison))
    if args.plot:
        print(f"plot written to {args.plot}")
    if status == EXIT_INTERRUPTED:
        print("tandem: interrupted; the table shows the runs that finished", file=sys.stderr)
    elif status != EXIT_OK:
        print("tandem: some runs failed; see the table", file=sys.stderr)
    return status
