"""The names a ServiceChain's chains and NFs take on a node's agent, which serves many resources' chains: the
resource's name first, then, for each addition after the first on an agent, the life it is (`edge_2.web`). An agent
keeps a removed chain's name taken (its results name each once), so a resource placed again where it ran before (a
node lost and back, a spec changed, the operator started again) takes names its earlier lives did not. A Kubernetes
name has no '_', so no other resource's names look like a life of this one's. And whether an agent runs the chains
it was given under those names (one started again runs none)."""

from __future__ import annotations

import re


def agent_prefix(resource: str, life: int = 0) -> str:
    return f"{resource}." if life == 0 else f"{resource}_{life}."


def agent_name(resource: str, name: str, life: int = 0) -> str:
    """A chain's or an NF's name on a node's agent in the resource's `life`-th addition there."""
    return agent_prefix(resource, life) + name


def life_of(resource: str, name: str) -> int | None:
    """The life of the resource's that an agent's chain or NF `name` belongs to; None for another resource's."""
    if name.startswith(agent_prefix(resource)):
        return 0
    found = re.match(rf"{re.escape(resource)}_(\d+)\.", name)
    return int(found.group(1)) if found else None


def next_life(resource: str, taken: list[str]) -> int:
    """The life for an addition on agents whose chains (removed ones too) are `taken`: after every earlier one."""
    lives = [life for name in taken if (life := life_of(resource, name)) is not None]
    return max(lives) + 1 if lives else 0


def bare_name(resource: str, name: str) -> str:
    """`name` as the resource writes it, without the prefix of whichever life it is of."""
    life = life_of(resource, name)
    return name if life is None else name.removeprefix(agent_prefix(resource, life))


def runs_chains(status, chains: list[str]) -> bool:
    """Whether an agent (its control API's Status) runs the chains it was given: an addition it answered is among
    its changes at once, and among its chains from its data plane's next report on; an agent started again (its
    pod's container restarted by its kubelet) has neither, though it answers."""
    known = {chain.name for chain in status.chains if not chain.removed}
    known |= {c.get("chain") for c in status.changes if c.get("op") == "add_chain" and c.get("state") == "applied"}
    return set(chains) <= known
