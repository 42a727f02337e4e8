"""A first-fit placement and the bounds it is judged against: the placement solver's starting point and its answer
where the full program is too large to build (controlplane/planning/placement.py).

First fit keeps a chain's consecutive NFs on one core while they fit (the next NF tries its predecessor's core
first), then takes the first core, in order, with room: cores fill as a prefix, as the fewest-cores program
wants them. Chains go in the order that makes first fit good for the objective: the largest first for fewest
cores (first-fit decreasing, at most 11/9 of the optimum bins plus a constant for bin packing), the most weighted
throughput per cycle first for throughput (the order that solves the fractional knapsack, the bound below)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# A core is full at this share of its cycles: the program's capacity row is <= 1, and a start that the solver
# finds a hair over it (float sums) would be thrown away.
_FULL = 1 - 1e-9


@dataclass
class FirstFit:
    core_of: dict[int, int] = field(default_factory=dict)  # NF index -> core
    rate_pps: dict[str, float] = field(default_factory=dict)  # accepted chain -> rate
    rejected: list[str] = field(default_factory=list)


def first_fit(
    nfs: list,
    cores: list[int],
    seconds,
    cheapest,
    objective: str,
    blocks: list[list[int]] | None = None,
    room: dict[int, float] | None = None,
) -> FirstFit:
    """Places whole chains at their offered rates, or rejects them; a chain without a rate (best effort) is placed
    at rate 0 on the emptiest cores (the solver gives it what is left). `seconds(nf, core)`: the seconds of that
    core a packet of the NF takes (its share of the core at 1 pps); `cheapest(nf)`: the least of them over the
    nodes. With `blocks` (lists of the cores), a chain's NFs stay in one block (the first it fits), so that each
    block can be solved alone. `room`: the share left of cores that already run other NFs."""
    by_chain: dict[str, list[int]] = {}
    for index, nf in enumerate(nfs):
        by_chain.setdefault(nf.chain, []).append(index)
    blocks = blocks or [cores]
    room = room or {}
    load = {core: 1.0 - room.get(core, 1.0) for core in cores}
    result = FirstFit()

    def chain_need(chain: str) -> float:
        rate = nfs[by_chain[chain][0]].rate_pps or 0.0
        return sum(rate * nfs[i].share * cheapest(nfs[i]) for i in by_chain[chain])

    def density(chain: str) -> float:
        value = sum(nfs[i].weight * nfs[i].share for i in by_chain[chain])
        cost = sum(nfs[i].share * cheapest(nfs[i]) for i in by_chain[chain])
        return value / cost

    def needs(i: int, core: int, rate: float) -> float:
        return rate * nfs[i].share * seconds(nfs[i], core)

    def fit(chain: str, block: list[int], rate: float) -> dict[int, int] | None:
        added: dict[int, float] = {}
        placed: dict[int, int] = {}
        previous = None
        for i in by_chain[chain]:
            candidates = ([previous] if previous is not None else []) + block
            core = next((c for c in candidates if load[c] + added.get(c, 0.0) + needs(i, c, rate) <= _FULL), None)
            if core is None:
                return None
            added[core] = added.get(core, 0.0) + needs(i, core, rate)
            placed[i] = previous = core
        for core, share in added.items():
            load[core] += share
        return placed

    rated = [chain for chain in by_chain if nfs[by_chain[chain][0]].rate_pps]
    key = chain_need if objective == "fewest_cores" else density
    for chain in sorted(rated, key=key, reverse=True):
        rate = nfs[by_chain[chain][0]].rate_pps
        placed = next((found for block in blocks if (found := fit(chain, block, rate)) is not None), None)
        if placed is None:
            result.rejected.append(chain)
            continue
        result.core_of.update(placed)
        result.rate_pps[chain] = rate
    for chain in by_chain:
        if chain in rated:
            continue
        block = min(blocks, key=lambda cores_of_block: sum(load[c] for c in cores_of_block) / len(cores_of_block))
        for i in by_chain[chain]:
            result.core_of[i] = min(block, key=lambda c: load[c])
        result.rate_pps[chain] = 0.0
    return result


def fewest_cores_bound(nfs: list, cheapest, room: float = 0.0) -> int:
    """No placement serves every chain at its rate on fewer new cores than their work adds up to (each NF on its
    cheapest node), less what `room` (the share left on cores already in use, together) takes."""
    total = sum((nf.rate_pps or 0.0) * nf.share * cheapest(nf) for nf in nfs)
    return max(0 if room else 1, math.ceil(total - room - 1e-9))


def throughput_bound(nfs: list, core_count: float, cheapest) -> float:
    """The most weighted packets a second (pps) any placement reaches: the cores' seconds pooled and handed to the
    chains with the most weighted throughput per second of core first, each NF on its cheapest node (the
    fractional knapsack, which drops chain integrity and the cores' edges: an upper bound)."""
    chains: dict[str, list] = {}
    for nf in nfs:
        chains.setdefault(nf.chain, []).append(nf)
    items = []
    for members in chains.values():
        value = sum(nf.weight * nf.share for nf in members)  # weighted throughput a chain packet a second buys
        cost = sum(nf.share * cheapest(nf) for nf in members)
        items.append((value / cost, cost, members[0].rate_pps))
    left, bound = float(core_count), 0.0
    for value_per_second, cost, rate in sorted(items, key=lambda item: item[0], reverse=True):
        spend = min(left, rate * cost) if rate else left
        bound += spend * value_per_second
        left -= spend
    return bound
