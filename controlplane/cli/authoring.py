"""The commands that help write a spec: validate, nfs, schema, compose."""

from __future__ import annotations

import json
from pathlib import Path

from controlplane import api
from controlplane.cli.common import check_scheduler_options, write_text
from controlplane.errors import EXIT_OK
from controlplane.sfc.spec_or_request import load_spec_or_request
from controlplane.spec import catalog
from controlplane.spec.deployment import run_config
from controlplane.spec.topology import chain_nodes
from controlplane.terminal.progress import say as tell_user


def cmd_validate(args) -> int:
    spec = load_spec_or_request(args.spec)
    if args.scheduler:
        api.check_schedulers([args.scheduler], args.spec)
    check_scheduler_options(spec, args.spec)
    verdict = catalog.check(run_config(spec, args.scheduler), args.spec)
    nfs = sum(len(chain_nodes(chain)) for chain in spec.chains)
    spares = sum(nf.scale.max_instances - 1 for chain in spec.chains for nf in chain_nodes(chain) if nf.scale)
    scheduler = args.scheduler or spec.scheduler.name
    print(
        f"{args.spec}: valid: {len(spec.chains)} chain(s), {nfs} NF(s)"
        + (f" and {spares} spare instance(s)" if spares else "")
        + f", scheduler {scheduler}, "
        f"needs {verdict['hugepages_2mb']} hugepages of 2 MB"
    )
    return EXIT_OK


def _bound(value, missing: str) -> str:
    if value is None:
        return missing
    return str(int(value)) if float(value).is_integer() else str(value)


def cmd_compose(args) -> int:
    import yaml

    from controlplane.sfc.compose import explain
    from controlplane.sfc.drawing import dot_text, draw
    from controlplane.sfc.spec_or_request import compose_request

    spec, composition = compose_request(args.sfc)
    config = run_config(spec)
    catalog.check(config, args.sfc)  # what the data plane would refuse, before anything is written
    # Costs of the μNFs as the VNFs chain them (a removed one's is what the composition saves): measured now with
    # --profile, else what earlier profiling cached, if anything.
    from controlplane.planning import profile

    chain = config["chains"][0]
    unmerged = dict(
        config,
        chains=[
            dict(
                chain,
                nfs=[
                    {"name": n.name, "type": n.type, "core": chain["nfs"][0]["core"], "args": n.args}
                    for n in composition.unmerged.nodes.values()
                ],
            )
        ],
    )
    if args.profile:
        estimates = profile.estimate_costs(unmerged, args.sfc, say=None if args.quiet else tell_user)
    else:
        cache = profile.load_cache()
        keys = {nf["name"]: profile.cost_key(nf, unmerged) for nf in unmerged["chains"][0]["nfs"]}
        estimates = {name: cache[key] for name, key in keys.items() if key in cache}
    costs = {name: entry["cycles_per_packet"] for name, entry in estimates.items()} or None
    stem = Path(args.sfc).with_suffix("")
    out = Path(args.out) if args.out else stem.parent / f"{stem.name}.composed.yaml"
    out.write_text(
        f"# Composed by ./tandem compose {args.sfc}: runnable as it is (./tandem run {out.name}).\n"
        + yaml.safe_dump(spec.model_dump(mode="json", by_alias=True, exclude_defaults=True), sort_keys=False)
    )
    print(explain(composition, costs))
    drawing = Path(args.draw) if args.draw else stem.parent / f"{stem.name}.composed"
    written = draw(
        dot_text(composition.composed, f"{spec.name}: composed μNF graph", groups=composition.groups), drawing
    )
    written += draw(
        dot_text(
            composition.unmerged,
            f"{spec.name}: as the VNFs chain it (removed μNFs dashed)",
            removed=[m.removed for m in composition.merges] + composition.unreachable,
        ),
        drawing.with_name(drawing.name + "-chained"),
    )
    print(f"spec written to {out}; drawings: {', '.join(written)}")
    return EXIT_OK


def cmd_schema(args) -> int:
    if args.crd:
        from controlplane.kubernetes.crd import crd_text as text
    else:
        from controlplane.sfc.schema import schema_text as text

    if args.out:
        write_text(args.out, text())
    else:
        print(text(), end="")
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
        touched = [
            f
            for f in (descriptor["writes"] if action == "ReadWrite" else descriptor["reads"])
            if f.startswith(prefixes[layer])
        ]
        layers.append(f"{layer} {action}{fields(touched) if action != 'NOP' and layer != 'payload' else ''}")
    gates = f"; gates {', '.join(descriptor['gates'])}" if descriptor["gates"] else ""
    return (
        f"{'stateful' if descriptor['stateful'] else 'stateless'}, "
        f"{'may drop' if descriptor['may_drop'] else 'never drops'}"
        + (" at random" if descriptor["random"] else "")
        + "; "
        + ", ".join(layers)
        + gates
    )
