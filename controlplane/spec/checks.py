"""A spec's semantic checks: what holds across its fields (names, cores, rings, graphs, I/O, traffic, scaling)."""

from __future__ import annotations

from controlplane.machine.cores import usable_cores
from controlplane.spec.chain_graph import Edge, graph_problems, parallel_forks
from controlplane.spec.http_traffic import MAX_HTTP_FLOWS
from controlplane.spec.limits import MIN_FRAME, data_plane_limit
from controlplane.spec.models import ChainSpec, Spec, traffic_field
from controlplane.spec.pcap_file import replay_problem
from controlplane.spec.ports import port_problems
from controlplane.spec.topology import chain_edges, chain_nodes, instance_names, kernel_io_nodes, mixes_io, node_where


def _http_problems(spec: Spec, chain: ChainSpec, where: str) -> list[tuple[str, str]]:
    """HTTP traffic is TCP frames sized by their requests, one ready frame per flow."""
    http = chain.traffic.http or spec.traffic.http
    if http is None:
        return []
    problems = []
    for block, path in ((chain.traffic, f"{where}.traffic"), (spec.traffic, "traffic")):
        if block.http is None:
            continue
        if block.size is not None:
            problems.append((f"{path}.size", "with http the frame sizes follow the requests: leave size out"))
        if block.protocol == "udp":
            problems.append((f"{path}.protocol", "http traffic is TCP: leave protocol out or make it tcp"))
    flows = chain.traffic.flows or spec.traffic.flows or 64
    if flows > MAX_HTTP_FLOWS:
        source = f"{where}.traffic.flows" if chain.traffic.flows else "traffic.flows"
        problems.append(
            (source, f"http traffic has one ready frame per flow: at most {MAX_HTTP_FLOWS} flows, got {flows}")
        )
    return problems


def _frame_shape_problems(spec: Spec, chain: ChainSpec, where: str) -> list[tuple[str, str]]:
    """A frame size must hold the headers the traffic's frames carry: IPv6 and a tag need more than 64 B."""

    def pick(field, default):
        return traffic_field(spec, chain, field, default)

    if pick("http", None) is not None or pick("pcap", None) is not None:
        return []  # requests are sized to hold their headers; a capture's frames are its own
    ip_version, vlan, protocol = pick("ip_version", 4), pick("vlan", None), pick("protocol", "udp")
    smallest = 14 + (4 if vlan else 0) + (40 if ip_version == 6 else 20) + (20 if protocol == "tcp" else 8) + 4
    size = pick("size", MIN_FRAME)
    sizes = [MIN_FRAME] if size == "datacenter" else [e.size for e in size] if isinstance(size, list) else [size]
    if min(sizes) >= smallest:
        return []
    source = f"{where}.traffic.size" if chain.traffic.size is not None else "traffic.size"
    what = f"IPv{ip_version}{', an 802.1Q tag' if vlan else ''} and {protocol.upper()}"
    return [(source, f"a {min(sizes)} B frame cannot hold {what} headers: frames of {smallest} B at least")]


def _pcap_problems(spec: Spec, chain: ChainSpec, where: str) -> list[tuple[str, str]]:
    """A replayed capture is the chain's whole traffic: nothing else may shape its frames."""
    problems = []
    for block, path in ((chain.traffic, f"{where}.traffic"), (spec.traffic, "traffic")):
        if block.pcap is None:
            if block.loop is not None:
                problems.append((f"{path}.loop", "only a pcap replay loops: give pcap too"))
            continue
        if problem := replay_problem(block.pcap):
            problems.append((f"{path}.pcap", f"{block.pcap}: {problem}"))
        for field in ("size", "http", "protocol", "flows", "ip_version", "vlan"):
            if getattr(block, field) is not None:
                problems.append((f"{path}.{field}", f"a pcap replay sends the capture's own frames: leave {field} out"))
    return problems


def _scale_problems(spec: Spec, chain: ChainSpec, where: str, cores: set[int]) -> list[tuple[str, str]]:
    """Where an NF may be scaled: fed by one NF alone (whose egress spreads its flows), in a DPDK chain without
    parallel branches, on cores the spec gives."""
    nodes = chain_nodes(chain)
    scaled = [(n, nf) for n, nf in enumerate(nodes) if nf.scale]
    if not scaled:
        return []
    problems = []
    edges = chain_edges(chain, where)
    names = {nf.name for nf in nodes}
    out: dict[str, list[Edge]] = {}
    for edge in edges:
        out.setdefault(edge.source, []).append(edge)
    forks = sorted(parallel_forks(out))
    for n, nf in scaled:
        at = f"{node_where(chain, where, n)}.scale"
        into = [edge for edge in edges if edge.target == nf.name]
        if kernel_io_nodes(chain):
            problems.append(
                (at, "scaling is for DPDK chains: this chain has kernel-I/O NFs, whose links are veths, not rings")
            )
        elif nf.type == "external":
            problems.append((at, "an external NF cannot be scaled: Tandem does not start its application"))
        elif spec.placement != "spec":
            problems.append((at, "needs placement: spec (the solver does not place instances yet): give the NF a core"))
        elif not into:
            problems.append(
                (
                    at,
                    f"{nf.name} is the chain's first NF, fed by the generator's one ring: "
                    "put an NF before it to spread its flows",
                )
            )
        elif len(into) > 1:
            problems.append(
                (
                    at,
                    f"{nf.name} has {len(into)} in-edges: a scaled NF is fed by one NF, whose egress spreads the flows",
                )
            )
        elif forks:
            problems.append(
                (at, f"the chain has a parallel group (after {forks[0]}): scaling inside one is not supported")
            )
        for name in instance_names(nf)[1:]:
            if name in names:
                problems.append((at, f"its instance {name!r} would take the name of another NF of the chain"))
        extra = nf.scale.max_instances - 1
        for k, core in enumerate(nf.scale.cores or []):
            if k >= extra:
                problems.append((f"{at}.cores", f"gives {len(nf.scale.cores)} cores for {extra} more instance(s)"))
                break
            if core not in cores:
                problems.append(
                    (f"{at}.cores[{k}]", f"core {core} does not exist on this machine (cores: {sorted(cores)})")
                )
            elif core == spec.control_core:
                problems.append((f"{at}.cores[{k}]", f"core {core} is the control core; instances go elsewhere"))
    return problems


def semantic_problems(spec: Spec, *, counting_all_nfs: bool = True) -> list[tuple[str, str]]:
    """What the machine and the data plane's limits say of `spec`: (field, message) each. A service's chain added
    live is checked as if the spec had had it, but not against the NFs a run holds at once (`counting_all_nfs`
    false): the spec's chains removed since give theirs back, which the data plane alone knows."""
    problems = []
    cores = usable_cores()
    if spec.control_core not in cores:
        problems.append(
            ("control_core", f"core {spec.control_core} does not exist on this machine (cores: {sorted(cores)})")
        )

    def check_capacity(path: str, capacity: int):
        if capacity < 2 or capacity & (capacity - 1):
            problems.append((path, f"must be a power of two (e.g. 1024, 2048), got {capacity}"))
        elif capacity < spec.burst:
            problems.append((path, f"must hold at least one burst ({spec.burst}), got {capacity}"))

    check_capacity("ring_capacity", spec.ring_capacity)
    if not spec.chains:
        problems.append(("chains", "the spec has no chains"))
    first_place: dict[tuple[str, str], str] = {}  # (kind, name) -> where it was first given

    def check_unique(kind: str, name: str, where: str):
        if (kind, name) in first_place:
            problems.append((f"{where}.name", f"duplicate {kind} name {name!r} (also {first_place[kind, name]})"))
        first_place.setdefault((kind, name), where)

    total_nfs = 0
    for c, chain in enumerate(spec.chains):
        where = f"chains[{c}]"
        check_unique("chain", chain.name, where)
        if chain.ring_capacity is not None:
            check_capacity(f"{where}.ring_capacity", chain.ring_capacity)
        nodes = chain_nodes(chain)
        listed = f"{where}.graph.nodes" if chain.graph is not None else f"{where}.nfs"
        if chain.nfs is not None and chain.graph is not None:
            problems.append((f"{where}.graph", "give the chain's NFs once: as nfs (a line) or as a graph, not both"))
        elif chain.nfs is None and chain.graph is None:
            problems.append(
                (f"{where}.nfs", "is required: the chain's NFs as a list (a line), or a graph of nodes and edges")
            )
        elif not nodes:
            problems.append((listed, f"chain {chain.name!r} is empty: give it at least one NF"))
        if len(nodes) > (max_hops := data_plane_limit("max_hops")):
            problems.append((listed, f"a chain has at most {max_hops} NFs, got {len(nodes)}"))
        if chain.graph is not None and nodes and chain.nfs is None:
            problems += graph_problems([nf.name for nf in nodes], chain_edges(chain, where), where)
        total_nfs += len(nodes)
        if not kernel_io_nodes(chain):
            problems += [
                (
                    f"{where}.{field}",
                    f"{field} is for chains with kernel-I/O NFs: add io: kernel (to the chain or an NF), "
                    f"or leave {field} out",
                )
                for field in ("mux", "link")
                if getattr(chain, field) is not None
            ]
        elif mixes_io(chain) and chain.link not in (None, "b2b"):
            problems.append(
                (
                    f"{where}.link",
                    "a chain that mixes DPDK and kernel-I/O NFs links them back to back (b2b): "
                    "its DPDK NFs' links are rings, which no switch carries",
                )
            )
        problems += _http_problems(spec, chain, where)
        problems += _pcap_problems(spec, chain, where)
        problems += _frame_shape_problems(spec, chain, where)
        problems += _scale_problems(spec, chain, where, cores)
        total_nfs += sum(nf.scale.max_instances - 1 for nf in nodes if nf.scale)
        for n, nf in enumerate(nodes):
            nf_where = node_where(chain, where, n)
            check_unique("NF", nf.name, nf_where)
            if nf.core is None:
                if spec.placement == "spec":
                    problems.append(
                        (f"{nf_where}.core", "is required (or let the solver choose: placement: auto or fewest_cores)")
                    )
            elif nf.core not in cores:
                problems.append(
                    (f"{nf_where}.core", f"core {nf.core} does not exist on this machine (cores: {sorted(cores)})")
                )
            elif nf.core == spec.control_core:
                problems.append(
                    (
                        f"{nf_where}.core",
                        f"core {nf.core} is the control core (generator, sink, scheduler); pin NFs elsewhere",
                    )
                )
    for p, core in enumerate(spec.placement_cores or []):
        if core not in cores:
            problems.append(
                (f"placement_cores[{p}]", f"core {core} does not exist on this machine (cores: {sorted(cores)})")
            )
        elif core == spec.control_core:
            problems.append((f"placement_cores[{p}]", f"core {core} is the control core; NFs go elsewhere"))
    if spec.placement != "spec" and spec.placement_cores == []:
        problems.append(("placement_cores", "is empty: the solver needs at least one core"))
    if counting_all_nfs and total_nfs > (max_nfs := data_plane_limit("max_nfs")):
        problems.append(("chains", f"at most {max_nfs} NFs in all, got {total_nfs}"))
    return problems + port_problems(spec)
