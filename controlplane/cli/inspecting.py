"""The commands that measure and explain: profile, primitives, place, explain."""

from __future__ import annotations

import json
from pathlib import Path

from controlplane.cli.common import write_json
from controlplane.errors import EXIT_OK, SpecError
from controlplane.sfc.spec_or_request import load_spec_or_request
from controlplane.spec import catalog
from controlplane.spec.deployment import run_config
from controlplane.spec.topology import chain_nodes
from controlplane.terminal.progress import say as tell_user


def cmd_profile(args) -> int:
    from controlplane.machine.description import machine_description
    from controlplane.planning import profile
    from controlplane.results.planning_report import profile_report

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
    document = {
        "spec": args.spec,
        "machine": machine_description(),
        "cycle_costs": costs,
        "switch_latency": latency,
        "switch_latency_core": nf_cores[0],
    }
    if args.json:  # files first, as in cmd_run
        write_json(args.json, document)
    print(profile_report(document))
    return EXIT_OK


def cmd_primitives(args) -> int:
    from controlplane.machine import primitive_latencies

    document = None if args.refresh else primitive_latencies.cached()
    if document is None:
        if not args.quiet:
            tell_user("measuring this machine's primitive latencies (about a minute; --quick: a few seconds)...")
        document = primitive_latencies.measure(args.core, args.other_core, args.quick)
    if args.json:
        write_json(args.json, document)
    if args.plot:
        primitive_latencies.plot(document, args.plot)
    print(primitive_latencies.report(document))
    return EXIT_OK


def cmd_place(args) -> int:
    from controlplane.planning.batch_model import describe
    from controlplane.planning.placement import place_config
    from controlplane.results.planning_report import placement_report

    spec = load_spec_or_request(args.spec)
    config = run_config(spec)
    verdict = catalog.check(config, args.spec)
    say = None if args.quiet else tell_user
    fewest = args.fewest_cores or config.get("placement") == "fewest_cores"
    solution, models = place_config(
        config,
        args.spec,
        verdict["options"],
        require_all=args.all,
        say=say,
        objective="fewest_cores" if fewest else "throughput",
        time_limit_s=args.time_limit,
    )
    if args.json:  # files first, as in cmd_run
        write_json(args.json, {"spec": args.spec, "models": models, "solution": solution})
    print(describe(models))
    print(placement_report(solution, config))
    return EXIT_OK


def cmd_explain(args) -> int:
    from controlplane.results.explain import breakdown_bars, explain, explain_difference, select_scheduler

    if len(args.results) > 2:
        raise SpecError(
            "explain",
            [("RESULTS.json", f"give one file (its breakdown) or two (what differs), got {len(args.results)}")],
        )
    documents = []
    for path in args.results:
        try:
            documents.append(select_scheduler(json.loads(Path(path).read_text()), args.scheduler, path))
        except OSError as error:
            raise SpecError(path, [("", f"cannot read it: {error.strerror}")]) from None
        except json.JSONDecodeError as error:
            raise SpecError(path, [("", f"not JSON: {error.msg} at line {error.lineno}")]) from None
    if len(documents) == 1:
        from controlplane.machine.primitive_latencies import cached

        text = explain(documents[0], args.results[0], cached())
    else:
        text = explain_difference(documents[0], documents[1], *args.results)
    if args.plot:
        from controlplane.results.plot import plot_breakdown

        bars = {}
        for document, path in zip(documents, args.results, strict=True):
            prefix = f"{Path(path).stem}: " if len(documents) > 1 else ""
            bars.update({prefix + label: bar for label, bar in breakdown_bars(document, path).items()})
        plot_breakdown(bars, "Where each packet's time went (./tandem explain)", args.plot)
    print(text)
    if args.plot:
        print(f"plot written to {args.plot}")
    return EXIT_OK
