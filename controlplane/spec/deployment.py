"""What a checked spec becomes: the data plane's run description, traffic resolved, scaled NFs expanded; and a chain
added to a running service."""

from __future__ import annotations

from collections.abc import Callable

from controlplane.errors import SpecError
from controlplane.machine.cores import usable_cores
from controlplane.spec.chain_graph import Edge, topological_order
from controlplane.spec.checks import semantic_problems
from controlplane.spec.http_traffic import DEFAULT_URLS, flow_urls
from controlplane.spec.models import ChainSpec, NfSpec, Spec, traffic_field
from controlplane.spec.ports import lab_addresses, lab_device, port_config, source_of
from controlplane.spec.topology import chain_edges, chain_nodes, instance_names, kernel_io_nodes, nf_io, node_where

# The cycles per packet measured before of a chain's NFs (given its config), by NF name; those not known left out.
KnownCosts = Callable[[dict], dict[str, float]]

# The papers' data-centre traffic: a bimodal mix around 200 B and 1400 B (UNiS Fig. 8, after Benson et al.).
DATACENTER_MIX = [(64, 5), (180, 15), (200, 20), (220, 10), (1380, 15), (1400, 25), (1420, 10)]


def _resolved_traffic(spec: Spec, chain: ChainSpec) -> dict:
    def pick(field, default):
        return traffic_field(spec, chain, field, default)

    rate = pick("rate", "max")
    size = pick("size", 64)
    if size == "datacenter":
        sizes = [[s, w] for s, w in DATACENTER_MIX]
    elif isinstance(size, list):
        sizes = [[entry.size, entry.weight] for entry in size]
    else:
        sizes = [[size, 1.0]]
    rate_pps, steps = 0.0 if rate == "max" else float(rate), pick("rate_steps", [])
    http, flows, pcap = pick("http", None), pick("flows", 64), pick("pcap", None)
    return {
        "rate_pps": rate_pps,
        "rate_steps_pps": steps,
        # What the chain offers on average (placement's rate, Bubble's initial batches): its fixed rate or the mean
        # of its steps; 0 = as fast as the generator can, unknown in advance.
        "mean_rate_pps": sum(steps) / len(steps) if steps else rate_pps,
        "step_seconds": pick("step_seconds", 1.0),
        "sizes": sizes,
        "flows": flows,
        "protocol": "tcp" if http else pick("protocol", "udp"),
        "ip_version": pick("ip_version", 4),
        "vlan": pick("vlan", 0),
        # Per flow, the URL its requests carry (the frame's size follows; "": a bare TCP segment); none: frames of the
        # size mix.
        "http_urls": flow_urls(http.urls or DEFAULT_URLS, http.malicious, flows, http.other)
        if http and not pcap
        else [],
        # A capture to replay instead (its frames in turn), and whether to start again at its end.
        "pcap": pcap or "",
        "pcap_loop": pick("loop", True),
    }


def placement_cores(spec: Spec) -> list[int]:
    if spec.placement_cores is not None:
        return sorted(set(spec.placement_cores))
    return sorted(usable_cores() - {spec.control_core})


def _nf_config(nf: NfSpec, chain: ChainSpec, placeholder_core: int, where: str) -> dict:
    # Until the solver has placed it, an NF of an auto-placed spec sits on the first placement core.
    config = {
        "name": nf.name,
        "type": nf.type,
        "core": nf.core if nf.core is not None else placeholder_core,
        "args": nf.args,
        "weight": nf.weight * chain.weight,
        "spec_path": where,
    }
    if kernel_io_nodes(chain):
        config["io"] = nf_io(nf, chain)
    if nf.batch is not None:
        config["batch"] = nf.batch
    if nf.restart != "never":
        config["restart"] = nf.restart
    if nf.cost_cycles is not None:
        config["cost_cycles"] = nf.cost_cycles
        config["cost_source"] = "spec"
    return config


def run_config(spec: Spec, scheduler: str | None = None, duration: float | None = None) -> dict:
    """The data plane's run description; `scheduler` and `duration` override the spec's."""
    if scheduler is None or scheduler == spec.scheduler.name:
        chosen = {"name": spec.scheduler.name, "options": dict(spec.scheduler.options)}
    else:
        chosen = {"name": scheduler, "options": dict(spec.scheduler_options.get(scheduler, {}))}
    cores = placement_cores(spec)
    placeholder = cores[0] if cores else spec.control_core
    ports = _ports(spec)
    chains = [_chain_config(spec, chain, f"chains[{c}]", placeholder) for c, chain in enumerate(spec.chains)]
    for chain, config in zip(spec.chains, chains, strict=True):
        config |= _port_ends(ports, chain)
    seconds = duration if duration is not None else spec.duration
    config = {
        "name": spec.name,
        "placement": spec.placement,
        "placement_cores": cores,
        "control_core": spec.control_core,
        "burst": spec.burst,
        "prefetch": spec.prefetch,
        # 0: until stopped (chains fed by ports; a lab's run stops when its clients are done, or after `seconds`);
        # their packets count from the first, with no warm-up to leave out.
        "duration": 0 if spec.lab else seconds or 0,
        "warmup": spec.warmup if seconds and not spec.lab else 0,
        "scheduler": chosen,
        "chains": chains,
        "ports": ports,
    }
    if spec.lab is not None:
        config["lab"] = _lab(spec) | ({"seconds": seconds} if seconds else {})
    return config


def _ports(spec: Spec) -> list[dict]:
    """The spec's ports, then one per lab host: its veth's root end, which the data plane opens with net_af_packet."""
    ports = [port_config(port, f"ports[{p}]") for p, port in enumerate(spec.ports)]
    for h, host in enumerate(spec.lab.hosts if spec.lab else []):
        ports.append({"name": host.name, "device": lab_device(h), "unhandled": "pass", "spec_path": f"lab.hosts[{h}]"})
    return ports


def _port_ends(ports: list[dict], chain: ChainSpec) -> dict:
    """Where a chain's traffic comes from and goes to, as the indexes of `ports` (_ports's list); none: the generator
    and the sink."""
    index = {port["name"]: p for p, port in enumerate(ports)}
    ends = {}
    if (source := source_of(chain.source)) is not None:
        ends |= {"from_port": index[source.port], "from_sources": source.source or []}
    if chain.to is not None:
        ends["to_port"] = index[chain.to]
    return ends


def _lab(spec: Spec) -> dict:
    """The lab as controlplane/machine/lab_network.py and lab_commands.py take it."""
    hosts = []
    for h, (host, address) in enumerate(zip(spec.lab.hosts, lab_addresses(spec.lab), strict=True)):
        commands = {
            role: [
                {
                    "command": command.command,
                    "time_limit": command.time_limit,
                    "expect": command.expect,
                    "spec_path": f"lab.hosts[{h}].{role}[{k}]",
                }
                for k, command in enumerate(getattr(host, role))
            ]
            for role in ("serve", "run")
        }
        hosts.append({"name": host.name, "address": address, **commands})
    return {"hosts": hosts, "directory": spec.lab.directory}


def _chain_config(spec: Spec, chain: ChainSpec, where: str, placeholder_core: int) -> dict:
    """A chain for the data plane: its NFs in topological order (a line keeps its order) and, for a graph, its edges."""
    nodes = chain_nodes(chain)
    edges = chain_edges(chain, where)
    position = {nf.name: n for n, nf in enumerate(nodes)}
    order = topological_order([nf.name for nf in nodes], edges)
    config = {
        "name": chain.name,
        "ring_capacity": chain.ring_capacity or spec.ring_capacity,
        "traffic": _resolved_traffic(spec, chain),
        "nfs": [
            _nf_config(nodes[position[name]], chain, placeholder_core, node_where(chain, where, position[name]))
            for name in order
        ],
    }
    if kernel_io_nodes(chain):  # each NF's config says which of them are kernel-I/O
        config["io"] = {"kind": "kernel", "mux": chain.mux or 1, "link": chain.link or "b2b"}
    if chain.graph is not None:
        config["edges"] = [
            {"from": e.source, "to": e.target, "spec_path": e.where} | ({"label": e.label} if e.label else {})
            for e in edges
        ]
    if any(nf.scale for nf in nodes):
        _add_instances(config, nodes, edges)
    return config


def _add_instances(config: dict, nodes: list[NfSpec], edges: list[Edge]) -> None:
    """A scaled NF's instances as NFs of their own, each right after the one before (the data plane keeps the
    topological order), with a copy of every edge into and out of it; the data plane's autoscaler decides how
    many take flows."""
    by_name = {nf.name: nf for nf in nodes}
    expanded = []
    for nf_config in config["nfs"]:
        nf = by_name[nf_config["name"]]
        if not nf.scale:
            expanded.append(nf_config)
            continue
        rule = nf.scale.model_dump(exclude={"max_instances", "cores"})
        expanded.append(nf_config | {"scale_group": nf.name, "instance": 1, "scale": rule})
        extra_cores = nf.scale.cores or []
        for k, name in enumerate(instance_names(nf)[1:]):
            # No core given: its NF's, until the pipeline finds one with more headroom
            # (controlplane/planning/spare_cores.py).
            given = k < len(extra_cores)
            core = extra_cores[k] if given else nf_config["core"]
            expanded.append(
                nf_config
                | {"name": name, "core": core, "scale_group": nf.name, "instance": k + 2}
                | ({} if given else {"core_open": True})
            )
    config["nfs"] = expanded
    instances = {nf.name: instance_names(nf) for nf in nodes}
    config["edges"] = [
        {"from": source, "to": target, "spec_path": e.where} | ({"label": e.label} if e.label else {})
        for e in edges
        for source in instances[e.source]
        for target in instances[e.target]
    ]


def added_chain_config(spec: Spec, chain: ChainSpec, running: dict, known_costs: KnownCosts | None = None) -> dict:
    """A chain to add to the running service of `spec` (whose data plane runs `running`), as the data plane takes it:
    checked as if the spec had had it, its fields named under `chain`, and each NF that gives no cost_cycles given
    that of a running NF of the same type and arguments (what a scheduler that needs costs measured at the start),
    else what `known_costs` knows of it (from the chain's config): no NF is profiled while the service runs.
    Raises SpecError."""
    n = len(spec.chains)
    where = f"chains[{n}]"
    before = set(semantic_problems(spec, counting_all_nfs=False))
    with_chain = spec.model_copy(update={"chains": [*spec.chains, chain]})
    problems = [
        ("chain" + path.removeprefix(where), message)
        if path.startswith(where)
        # A problem it makes elsewhere (a port it would share with a chain that takes every frame there) is its own.
        else ("chain", f"with it, {path}: {message}")
        for path, message in semantic_problems(with_chain, counting_all_nfs=False)
        if path.startswith(where) or (path, message) not in before
    ]
    if problems:
        raise SpecError("the chain", problems)
    cores = placement_cores(spec)
    # Its ports are the service's own (semantic_problems named any other), numbered as the data plane has them: the
    # spec's, the lab's hosts, then those added live (spec/live_additions.py).
    config = _chain_config(spec, chain, "chain", cores[0] if cores else spec.control_core) | _port_ends(
        running.get("ports", _ports(spec)), chain
    )
    measured = {
        (nf["type"], repr(nf["args"])): (nf["name"], nf["cost_cycles"])
        for running_chain in running["chains"]
        for nf in running_chain["nfs"]
        if nf.get("cost_cycles")
    }
    known = known_costs(config) if known_costs else {}
    for nf in config["nfs"]:
        # A scaled NF's instance with no core of its own stays on its NF's: the cores with more headroom are
        # looked for at a start (planning/spare_cores.py), against NFs not yet running.
        nf.pop("core_open", None)
        if "cost_cycles" in nf:
            continue
        if twin := measured.get((nf["type"], repr(nf["args"]))):
            nf |= {"cost_cycles": twin[1], "cost_source": f"as NF {twin[0]}"}
        elif cycles := known.get(nf["name"]):
            nf |= {"cost_cycles": cycles, "cost_source": "measured before (the profiler's cache)"}
    return config
