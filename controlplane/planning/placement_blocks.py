"""Placement of an instance too large for one program: the cores cut into blocks (a node's cores, BLOCK_CORES at
a time), each chain in the block first fit put it in, and one program per block (controlplane/planning/
placement.py decides when, and keeps first fit over whole nodes instead where it packs tighter)."""

from __future__ import annotations

import time

from controlplane.planning.first_fit import FirstFit
from controlplane.planning.placement_program import ProgramResult, nodes_of

# Eight cores of a few dozen NFs: a program HiGHS builds in milliseconds and searches well in its share of the time.
BLOCK_CORES = 8


def chunks_of(cores: list[int], node_of: dict[int, str]) -> list[list[int]]:
    """The blocks a large instance is solved in: each node's cores, BLOCK_CORES at a time."""
    return [
        members[at : at + BLOCK_CORES]
        for members in nodes_of(cores, node_of).values()
        for at in range(0, len(members), BLOCK_CORES)
    ]


def solve_by_blocks(program, nfs, chunks, edges, start, require_all: bool, deadline: float) -> ProgramResult:
    """The program solved for each block of cores with the chains first fit put in it, then once for the chains it
    left out on the blocks it left empty."""
    blocks = _blocks(nfs, chunks, start)
    if require_all and start.rejected and not blocks[-1][1]:
        return ProgramResult(
            f"no placement found for chain {start.rejected[0]}: first fit left no core for it, and the program is "
            f"too large to search whole ({len(nfs)} NFs x {sum(map(len, chunks))} cores)"
        )
    merged = ProgramResult("optimal")
    blocks = [block for block in blocks if block[0] and block[1]]
    for number, (members, block_cores) in enumerate(blocks):
        chains = {nfs[i].chain for i in members}
        local = FirstFit(
            core_of={k: start.core_of[i] for k, i in enumerate(members) if i in start.core_of},
            rate_pps={chain: rate for chain, rate in start.rate_pps.items() if chain in chains},
        )
        names = {nfs[i].name for i in members}
        part = program(
            [nfs[i] for i in members],
            block_cores,
            edges=[edge for edge in edges if edge[0] in names],
            start=None if require_all and len(local.rate_pps) < len(chains) else local,
            time_limit_s=(deadline - time.monotonic()) / (len(blocks) - number),
        )
        if part.status not in ("optimal", "time limit"):
            return part
        if part.status == "time limit":
            merged.status = "time limit"
        merged.core_of.update({members[k]: core for k, core in part.core_of.items()})
        merged.rate_pps.update(part.rate_pps)
        merged.accepted += part.accepted
        merged.crossing += part.crossing
        merged.objective += part.objective
    order = list(dict.fromkeys(nf.chain for nf in nfs))
    merged.accepted.sort(key=order.index)
    for chain in order:
        merged.rate_pps.setdefault(chain, 0.0)
    return merged


def _blocks(nfs, chunks: list[list[int]], start) -> list[tuple[list[int], list[int]]]:
    """(NF indexes, cores) per chunk of cores, each chain in the chunk first fit put it in; the last block holds
    the chains first fit rejected and the chunks no chain uses."""
    chunk_of = {core: number for number, chunk in enumerate(chunks) for core in chunk}
    blocks: list[tuple[list[int], list[int]]] = [([], chunk) for chunk in chunks]
    rest: tuple[list[int], list[int]] = ([], [])
    by_chain: dict[str, list[int]] = {}
    for i, nf in enumerate(nfs):
        by_chain.setdefault(nf.chain, []).append(i)
    for members in by_chain.values():
        home = start.core_of.get(members[0])
        (rest if home is None else blocks[chunk_of[home]])[0].extend(members)
    for members, chunk in blocks:
        if not members:
            rest[1].extend(chunk)
    return [block for block in blocks if block[0]] + [rest]
