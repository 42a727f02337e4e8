"""The cluster commands: `node` (a node's Tandem agent, which reports itself on its Node) and `operator` (which
places ServiceChains across the cluster's Tandem nodes)."""

from __future__ import annotations

import os
from pathlib import Path

from controlplane.errors import EXIT_OK, SpecError
from controlplane.launch.control_server import read_token
from controlplane.terminal.progress import say as tell_user


def cmd_operator(args) -> int:
    from controlplane.kubernetes import chain_operator

    if args.kubeconfig:
        if not Path(args.kubeconfig).is_file():
            raise SpecError("--kubeconfig", [("", f"{args.kubeconfig}: no such file")])
        os.environ["KUBECONFIG"] = args.kubeconfig
    token = read_token(args.token_file) if args.token_file else None
    where = f"namespace {args.namespace}" if args.namespace else "every namespace"
    if args.plan_only:
        where += " (plan only: ServiceChains are placed and their status says where; no node is configured)"
    tell_user(f"operator: watching ServiceChains in {where} and the cluster's Tandem nodes; Ctrl-C stops it")
    chain_operator.run(token, args.time_limit, args.namespace, args.plan_only)
    return EXIT_OK


def cmd_node(args) -> int:
    from controlplane.cli.service import cmd_serve
    from controlplane.kubernetes import api_client
    from controlplane.kubernetes.node_agent import NodeReport, measured_models, nfs_to_measure, on_own_cores
    from controlplane.kubernetes.tandem_nodes import annotations
    from controlplane.results.live_metrics import parse_listen_address
    from controlplane.sfc.spec_or_request import load_spec_or_request

    if not args.node:
        raise SpecError("--node", [("", "give the Node's name (a pod has it as $NODE_NAME from the downward API)")])
    if not args.listen:
        raise SpecError("--listen", [("", "the operator reaches the agent on TCP: give [HOST]:PORT")])
    host, port = parse_listen_address(args.listen, "--listen")
    advertise = args.advertise or (f"{host}:{port}" if host not in ("", "0.0.0.0") else None)
    if advertise is None:
        raise SpecError("--advertise", [("", "listening on every address: give the one the operator reaches")])
    parse_listen_address(advertise, "--advertise")
    spec = on_own_cores(load_spec_or_request(args.spec))
    extra = nfs_to_measure(args.measure)
    api = api_client.connect(args.kubeconfig)  # before measuring: a node that cannot report is told at once
    say = None if args.quiet else tell_user
    cores, hz, models = measured_models(spec, args.spec, extra, say)
    report = NodeReport(api, args.node, Path(args.socket), annotations(advertise, cores, hz, models), tell_user)
    report.start()
    try:
        return cmd_serve(args, spec)
    finally:
        report.withdraw()
