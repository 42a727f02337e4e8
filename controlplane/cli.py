"""The `tandem` command line: run, compare, explain, validate, profile, place, compose, schema, nfs."""
from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

from controlplane import api, catalog
from controlplane.errors import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_OK, SpecError, TandemError
from controlplane.progress import say as tell_user
from controlplane.report import comparison_csv, comparison_report, run_report
from controlplane.request import load_spec_or_request
from controlplane.spec import chain_nodes, run_config


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


def _capture(path: str, limit: int) -> dict:
    """The data plane's capture settings, once the file is known to be writable (bad input: exit 2, before the run)."""
    target = Path(path).resolve()
    try:
        with open(target, "wb"):
            pass
    except OSError as error:
        raise SpecError("--capture", [("", f"cannot write {path}: {error.strerror}")]) from None
    return {"path": str(target), "limit": limit}


def _repeat(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 100, got {text!r}")
    return int(text)


def _check_scheduler_options(spec, source: str) -> None:
    """The spec's options for other schedulers are checked like its own, named by where they were given."""
    api.check_schedulers(list(spec.scheduler_options), source, "scheduler_options")
    for name in spec.scheduler_options:
        try:
            catalog.check(run_config(spec, name), source)
        except SpecError as error:
            raise SpecError(source, [(path.replace("scheduler", f"scheduler_options.{name}", 1), message)
                                     for path, message in error.problems]) from None


def _write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as error:
        raise TandemError(f"cannot write {path}: {error.strerror}") from None


def _write_json(path: str, document: dict) -> None:
    _write_text(path, json.dumps(document, indent=2))


def cmd_run(args) -> int:
    from controlplane.progress import ProgressLine

    spec = load_spec_or_request(args.spec)
    if args.plot and not any(nf.scale for chain in spec.chains for nf in chain_nodes(chain)):
        raise SpecError(args.spec, [("--plot", "draws the auto-scaling timeline, and this spec scales no NF (give one `scale`)")])
    capture = _capture(args.capture, args.capture_limit) if args.capture else None
    duration = args.duration if args.duration is not None else spec.duration
    progress = None if args.quiet else ProgressLine("", spec.warmup + duration)
    if args.metrics and not args.quiet:
        tell_user(f"serving live metrics on {args.metrics} (Prometheus' format, at /metrics) while the run lasts")
    outcome = api.run(spec, args.scheduler, args.duration, capture=capture, metrics=args.metrics, on_event=progress,
                      profile=args.profile, source=args.spec)
    if progress:
        progress.finish()
    for note in outcome.notes:
        print(f"note: {note}", file=sys.stderr)
    if outcome.results is not None:
        results = outcome.results.as_json()
        # Files first: a reader of stdout that goes away (`| head`) must not cost the user the JSON.
        if args.json:
            _write_json(args.json, dict(results, spec=args.spec, exit_status=outcome.exit_status))
        print(run_report(results))
        if args.plot:
            from controlplane.plot import plot_scaling

            plot_scaling(results, args.plot)
        if args.profile:
            from controlplane.explain import explain
            from controlplane.primitive_latencies import cached

            print("\n" + explain(results, args.spec, cached()))
    if outcome.exit_status != EXIT_OK:
        partial = " (partial results above)" if outcome.results is not None else ""
        print(f"tandem: run failed: {outcome.error}{partial}", file=sys.stderr)
    return outcome.exit_status


def cmd_compare(args) -> int:
    spec = load_spec_or_request(args.spec)
    _check_scheduler_options(spec, args.spec)
    if args.metrics and not args.quiet:
        tell_user(f"serving live metrics on {args.metrics} (Prometheus' format, at /metrics) while the runs last")
    result = api.compare(spec, args.schedulers, args.repeat, args.duration, metrics=args.metrics, quiet=args.quiet,
                         profile=args.profile, ceiling=not args.no_ceiling_runs, source=args.spec)
    comparison = result.as_json()
    status = result.exit_status
    if args.json:  # files first, as in cmd_run
        _write_json(args.json, comparison)
    if args.csv:
        _write_text(args.csv, comparison_csv(comparison))
    if args.plot:
        from controlplane.plot import plot_comparison

        plot_comparison(comparison, args.plot)
    print(comparison_report(comparison))
    if args.plot:
        print(f"plot written to {args.plot}")
    if status == EXIT_INTERRUPTED:
        print("tandem: interrupted; the table shows the runs that finished", file=sys.stderr)
    elif status != EXIT_OK:
        print("tandem: some runs failed; see the table", file=sys.stderr)
    return status


def cmd_validate(args) -> int:
    spec = load_spec_or_request(args.spec)
    if args.scheduler:
        api.check_schedulers([args.scheduler], args.spec)
    _check_scheduler_options(spec, args.spec)
    verdict = catalog.check(run_config(spec, args.scheduler), args.spec)
    nfs = sum(len(chain_nodes(chain)) for chain in spec.chains)
    spares = sum(nf.scale.max_instances - 1 for chain in spec.chains for nf in chain_nodes(chain) if nf.scale)
    scheduler = args.scheduler or spec.scheduler.name
    print(f"{args.spec}: valid: {len(spec.chains)} chain(s), {nfs} NF(s)" + (f" and {spares} spare instance(s)" if spares else "")
          + f", scheduler {scheduler}, "
          f"needs {verdict['hugepages_2mb']} hugepages of 2 MB")
    return EXIT_OK


def cmd_profile(args) -> int:
    from controlplane import profile
    from controlplane.report import machine_description, profile_report

    spec = load_spec_or_request(args.spec)
    config = run_config(spec)
    catalog.check(config, args.spec)  # bad NF arguments are reported before anything runs
    say = None if args.quiet else tell_user
    costs = profile.estimate_costs(config, args.spec, refresh=args.refresh, say=say)
    nf_cores = sorted({nf.core for chain in spec.chains for nf in chain_nodes(chain)})
    latency = None
    if not args.no_switch_latency:
        if say:
            say(f"measuring process-controller switch latency on core {nf_cores[0]}...")
        latency = profile.switch_latency(config, args.spec, nf_cores[0])
    document = {"spec": args.spec, "machine": machine_description(), "cycle_costs": costs,
                "switch_latency": latency, "switch_latency_core": nf_cores[0]}
    if args.json:  # files first, as in cmd_run
        _write_json(args.json, document)
    print(profile_report(document))
    return EXIT_OK


def cmd_primitives(args) -> int:
    from controlplane import primitive_latencies

    document = None if args.refresh else primitive_latencies.cached()
    if document is None:
        if not args.quiet:
            tell_user("measuring this machine's primitive latencies (about a minute; --quick: a few seconds)...")
        document = primitive_latencies.measure(args.core, args.other_core, args.quick)
    if args.json:
        _write_json(args.json, document)
    if args.plot:
        primitive_latencies.plot(document, args.plot)
    print(primitive_latencies.report(document))
    return EXIT_OK


def cmd_place(args) -> int:
    from controlplane.batch_model import describe
    from controlplane.placement import place_config
    from controlplane.report import placement_report

    spec = load_spec_or_request(args.spec)
    config = run_config(spec)
    verdict = catalog.check(config, args.spec)
    say = None if args.quiet else tell_user
    fewest = args.fewest_cores or config.get("placement") == "fewest_cores"
    solution, models = place_config(config, args.spec, verdict["options"], require_all=args.all, say=say,
                                    objective="fewest_cores" if fewest else "throughput")
    if args.json:  # files first, as in cmd_run
        _write_json(args.json, {"spec": args.spec, "models": models, "solution": solution})
    print(describe(models))
    print(placement_report(solution, config))
    return EXIT_OK


def _bound(value, missing: str) -> str:
    if value is None:
        return missing
    return str(int(value)) if float(value).is_integer() else str(value)


def cmd_compose(args) -> int:
    import yaml

    from controlplane.compose import explain
    from controlplane.graph_drawing import dot_text, draw
    from controlplane.request import compose_request

    spec, composition = compose_request(args.sfc)
    config = run_config(spec)
    catalog.check(config, args.sfc)  # what the data plane would refuse, before anything is written
    # Costs of the μNFs as the VNFs chain them (a removed one's is what the composition saves): measured now with
    # --profile, else what earlier profiling cached, if anything.
    from controlplane import profile

    chain = config["chains"][0]
    unmerged = dict(config, chains=[dict(chain, nfs=[{"name": n.name, "type": n.type, "core": chain["nfs"][0]["core"], "args": n.args}
                                                    for n in composition.unmerged.nodes.values()])])
    if args.profile:
        estimates = profile.estimate_costs(unmerged, args.sfc, say=None if args.quiet else tell_user)
    else:
        cache = profile.load_cache()
        keys = {nf["name"]: profile.cost_key(nf, unmerged) for nf in unmerged["chains"][0]["nfs"]}
        estimates = {name: cache[key] for name, key in keys.items() if key in cache}
    costs = {name: entry["cycles_per_packet"] for name, entry in estimates.items()} or None
    stem = Path(args.sfc).with_suffix("")
    out = Path(args.out) if args.out else stem.parent / f"{stem.name}.composed.yaml"
    out.write_text(f"# Composed by ./tandem compose {args.sfc}: runnable as it is (./tandem run {out.name}).\n"
                   + yaml.safe_dump(spec.model_dump(mode="json", by_alias=True, exclude_defaults=True), sort_keys=False))
    print(explain(composition, costs))
    drawing = Path(args.draw) if args.draw else stem.parent / f"{stem.name}.composed"
    written = draw(dot_text(composition.composed, f"{spec.name}: composed μNF graph", groups=composition.groups), drawing)
    written += draw(dot_text(composition.unmerged, f"{spec.name}: as the VNFs chain it (removed μNFs dashed)",
                             removed=[m.removed for m in composition.merges]), drawing.with_name(drawing.name + "-chained"))
    print(f"spec written to {out}; drawings: {', '.join(written)}")
    return EXIT_OK


def cmd_explain(args) -> int:
    from controlplane.explain import breakdown_bars, explain, explain_difference, select_scheduler

    if len(args.results) > 2:
        raise SpecError("explain", [("RESULTS.json", f"give one file (its breakdown) or two (what differs), got {len(args.results)}")])
    documents = []
    for path in args.results:
        try:
            documents.append(select_scheduler(json.loads(Path(path).read_text()), args.scheduler, path))
        except OSError as error:
            raise SpecError(path, [("", f"cannot read it: {error.strerror}")]) from None
        except json.JSONDecodeError as error:
            raise SpecError(path, [("", f"not JSON: {error.msg} at line {error.lineno}")]) from None
    if len(documents) == 1:
        from controlplane.primitive_latencies import cached

        text = explain(documents[0], args.results[0], cached())
    else:
        text = explain_difference(documents[0], documents[1], *args.results)
    if args.plot:
        from controlplane.plot import plot_breakdown

        bars = {}
        for document, path in zip(documents, args.results):
            prefix = f"{Path(path).stem}: " if len(documents) > 1 else ""
            bars.update({prefix + label: bar for label, bar in breakdown_bars(document, path).items()})
        plot_breakdown(bars, "Where each packet's time went (./tandem explain)", args.plot)
    print(text)
    if args.plot:
        print(f"plot written to {args.plot}")
    return EXIT_OK


def cmd_schema(args) -> int:
    from controlplane.spec_schema import schema_text

    if args.out:
        _write_text(args.out, schema_text())
    else:
        print(schema_text(), end="")
    return EXIT_OK


def cmd_nfs(args) -> int:
    entries = catalog.catalog()
    if args.json:
        print(json.dumps(entries, indent=2))
        return EXIT_OK

    def describe(arguments):
        for arg in arguments:
            default = "required" if arg["default"] is None else f"default {json.dumps(arg['default'])}"
            bounds = ""
            if "min" in arg or "max" in arg:
                bounds = f", {_bound(arg.get('min'), '-inf')}..{_bound(arg.get('max'), 'inf')}"
            choices = f", one of {'/'.join(arg['choices'])}" if "choices" in arg else ""
            print(f"      {arg['name']} ({arg['type']}, {default}{bounds}{choices}): {arg['help']}")

    print("NF types (spec: chains[].nfs[].type, arguments under args):")
    for nf in entries["nfs"]:
        print(f"  {nf['name']}: {nf['help']}")
        print(f"    {descriptor_line(nf['descriptor'])}")
        describe(nf["args"])
    print("\nSchedulers (spec: scheduler.name, options under scheduler.options):")
    for scheduler in entries["schedulers"]:
        print(f"  {scheduler['name']}: {scheduler['help']}")
        describe(scheduler["options"])
    return EXIT_OK


def descriptor_line(descriptor: dict) -> str:
    """An NF's descriptor in one line: state, drops, per layer its action with the fields behind it, and its gates."""
    def fields(layer_fields: list[str]) -> str:
        return f" ({', '.join(layer_fields)})" if layer_fields else ""

    prefixes = {"L2": "eth_", "L3": "ipv4_", "L4": "l4_", "payload": "payload"}
    layers = []
    for layer, action in descriptor["layers"].items():
        touched = [f for f in (descriptor["writes"] if action == "ReadWrite" else descriptor["reads"]) if f.startswith(prefixes[layer])]
        layers.append(f"{layer} {action}{fields(touched) if action != 'NOP' and layer != 'payload' else ''}")
    gates = f"; gates {', '.join(descriptor['gates'])}" if descriptor["gates"] else ""
    return (f"{'stateful' if descriptor['stateful'] else 'stateless'}, {'may drop' if descriptor['may_drop'] else 'never drops'}; "
            + ", ".join(layers) + gates)


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="tandem", description="Run chains of poll-mode NFs on shared cores under NF schedulers.")
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run a spec once and print its results")
    run.add_argument("spec")
    run.add_argument("--scheduler", help="scheduler to use instead of the spec's")
    run.add_argument("--duration", type=_positive, help="seconds to measure (after warm-up)")
    run.add_argument("--json", metavar="PATH", help="write the full results as JSON")
    run.add_argument("--quiet", action="store_true", help="no live progress")
    run.add_argument("--capture", metavar="FILE", help="write delivered packets (every chain's, as delivered) to a pcap file")
    run.add_argument("--capture-limit", metavar="N", type=_capture_limit, default=10_000,
                     help="packets to capture at most (default 10000)")
    run.add_argument("--profile", action="store_true", help="trace the packets whose latency is sampled hop by hop: where it went "
                                                             "(printed; ./tandem explain reads it from --json)")
    run.add_argument("--plot", metavar="PATH", help="draw the auto-scaling timeline of the scaled NFs (PNG)")
    run.add_argument("--metrics", metavar="[HOST]:PORT", help="serve live metrics for Prometheus while the run lasts (e.g. :9464)")
    run.set_defaults(handler=cmd_run)

    comp = commands.add_parser("compare", help="run a spec under several schedulers and compare medians")
    comp.add_argument("spec")
    comp.add_argument("--schedulers", type=_scheduler_list, help="comma-separated; default: every scheduler (tandem nfs lists them)")
    comp.add_argument("--repeat", type=_repeat, default=3)
    comp.add_argument("--duration", type=_positive, help="seconds to measure each run (after warm-up)")
    comp.add_argument("--json", metavar="PATH", help="write every run's results and the medians as JSON")
    comp.add_argument("--csv", metavar="PATH", help="write one row per run and scheduler (the table's columns) as CSV")
    comp.add_argument("--plot", metavar="PATH", help="draw throughput and latency per scheduler (PNG)")
    comp.add_argument("--quiet", action="store_true", help="no live progress")
    comp.add_argument("--profile", action="store_true", help="trace packets hop by hop in every run (./tandem explain FILE)")
    comp.add_argument("--metrics", metavar="[HOST]:PORT", help="serve live metrics for Prometheus while the runs last (e.g. :9464)")
    comp.add_argument("--no-ceiling-runs", action="store_true",
                      help="skip the 6 rtc runs (batches 32...1024) that give the table its best-rtc ceiling")
    comp.set_defaults(handler=cmd_compare)

    validate = commands.add_parser("validate", help="check a spec without running it")
    validate.add_argument("spec")
    validate.add_argument("--scheduler", help="check with this scheduler instead of the spec's")
    validate.set_defaults(handler=cmd_validate)

    prof = commands.add_parser("profile", help="estimate each NF's cycles per packet (cached) and the switch latency of each backend")
    prof.add_argument("spec")
    prof.add_argument("--refresh", action="store_true", help="measure again instead of using cached estimates")
    prof.add_argument("--no-switch-latency", action="store_true", help="skip the process-controller switch-latency probe")
    prof.add_argument("--json", metavar="PATH", help="write the estimates and latencies as JSON")
    prof.add_argument("--quiet", action="store_true", help="no progress messages")
    prof.set_defaults(handler=cmd_profile)

    prim = commands.add_parser("primitives", help="this machine's context switch, system call, cache-line and memory latencies "
                                                 "(SCC Table 2, Fig. 3), cached; explain uses them")
    prim.add_argument("--refresh", action="store_true", help="measure again instead of reading the cache")
    prim.add_argument("--quick", action="store_true", help="fewer repetitions and working sets up to 16 MiB")
    prim.add_argument("--core", type=int, help="the core switches are measured on (default: the last)")
    prim.add_argument("--other-core", type=int, help="the cache line's other core (default: 0)")
    prim.add_argument("--json", metavar="PATH", help="write the measurement as JSON")
    prim.add_argument("--plot", metavar="PATH", help="draw memory latency by working set (PNG)")
    prim.add_argument("--quiet", action="store_true")
    prim.set_defaults(handler=cmd_primitives)

    place = commands.add_parser("place", help="choose NF cores and batch sizes with the placement solver (HiGHS): Bubble's "
                                              "most weighted throughput, or μNF's fewest cores")
    place.add_argument("spec")
    place.add_argument("--all", action="store_true", help="every chain must be placed whole at its offered rate")
    place.add_argument("--fewest-cores", action="store_true", help="μNF-MC: every chain at its rate on as few cores as carry it, "
                                                                  "consecutive NFs that pass the most traffic together "
                                                                  "(the default where the spec says placement: fewest_cores)")
    place.add_argument("--json", metavar="PATH", help="write the models and the solution as JSON")
    place.add_argument("--quiet", action="store_true", help="no progress messages")
    place.set_defaults(handler=cmd_place)

    comp_sfc = commands.add_parser("compose", help="compose an SFC request's VNFs into one μNF graph: say what was merged and why, "
                                                   "write a runnable spec, draw the graph")
    comp_sfc.add_argument("sfc", help="an SFC request (sfc: {vnfs, links}); run and compare accept one too")
    comp_sfc.add_argument("--out", metavar="SPEC", help="where to write the composed spec (default: SFC.composed.yaml beside it)")
    comp_sfc.add_argument("--draw", metavar="PREFIX", help="drawings PREFIX.dot/.svg/.png (default: SFC.composed beside it)")
    comp_sfc.add_argument("--profile", action="store_true", help="profile the μNFs (as root) for the expected saving, "
                                                                  "instead of using cached estimates only")
    comp_sfc.add_argument("--quiet", action="store_true", help="no progress messages")
    comp_sfc.set_defaults(handler=cmd_compose)

    expl = commands.add_parser("explain", help="where each packet's time went, from --profile results; with two files, "
                                                 "what differs and why")
    expl.add_argument("results", nargs="+", metavar="RESULTS.json", help="one or two files of run --json or compare --json")
    expl.add_argument("--scheduler", help="in a comparison, this scheduler's runs only")
    expl.add_argument("--plot", metavar="PATH", help="a stacked bar per scheduler (PNG)")
    expl.set_defaults(handler=cmd_explain)

    schema = commands.add_parser("schema", help="print the JSON Schema of specs and SFC requests (for editors; schema/tandem.schema.json)")
    schema.add_argument("--out", metavar="PATH", help="write it to PATH instead")
    schema.set_defaults(handler=cmd_schema)

    nfs = commands.add_parser("nfs", help="list NF types and schedulers with their arguments")
    nfs.add_argument("--json", action="store_true")
    nfs.set_defaults(handler=cmd_nfs)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
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
        print(f"tandem: internal error: {type(error).__name__}: {error} (TANDEM_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1
