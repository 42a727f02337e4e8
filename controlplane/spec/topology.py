"""A spec chain's shape: its NFs and edges as the spec gives them, their spec paths, I/O, scaled instances."""

from __future__ import annotations

from controlplane.spec.chain_graph import Edge, line_edges
from controlplane.spec.models import ChainSpec, NfSpec


def chain_nodes(chain: ChainSpec) -> list[NfSpec]:
    """A chain's NFs as the spec gives them: its list, or its graph's nodes."""
    if chain.graph is not None:
        return chain.graph.nodes
    return chain.nfs or []


def nf_io(nf: NfSpec, chain: ChainSpec) -> str:
    """How the NF moves packets: its own `io`, or its chain's."""
    return nf.io or chain.io


def kernel_io_nodes(chain: ChainSpec) -> list[NfSpec]:
    """The chain's kernel-I/O NFs (all of them in an `io: kernel` chain, some where it mixes them)."""
    return [nf for nf in chain_nodes(chain) if nf_io(nf, chain) == "kernel"]


def mixes_io(chain: ChainSpec) -> bool:
    """Whether the chain has DPDK and kernel-I/O NFs both."""
    return 0 < len(kernel_io_nodes(chain)) < len(chain_nodes(chain))


def node_where(chain: ChainSpec, where: str, n: int) -> str:
    """The spec path of a chain's n-th NF as the spec gives them."""
    return f"{where}.graph.nodes[{n}]" if chain.graph is not None else f"{where}.nfs[{n}]"


def chain_edges(chain: ChainSpec, where: str) -> list[Edge]:
    if chain.graph is None:
        return line_edges([nf.name for nf in chain_nodes(chain)], where)
    return [Edge(e.source, e.to, e.label, f"{where}.graph.edges[{i}]") for i, e in enumerate(chain.graph.edges)]


def instance_names(nf: NfSpec) -> list[str]:
    """A scaled NF's instances: the NF itself, then `name.2`, `name.3`, ...; an NF that is not scaled: itself."""
    return [nf.name] + [f"{nf.name}.{k}" for k in range(2, nf.scale.max_instances + 1)] if nf.scale else [nf.name]
