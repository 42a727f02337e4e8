"""The spec's limits: the data plane's sizes, read from its catalog, and bounds on what a spec file holds."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from pydantic import AfterValidator, Field

from controlplane.spec import catalog

MIN_FRAME, MAX_FRAME = 64, 1518
# The data plane's sizes (the NFs of a chain, NFs in all, a burst, frames per kernel-I/O call) are set in one place,
# its C++ constants, and read from its catalog when a spec is checked: see data_plane_limit.
MAX_RING = 1 << 22  # slots; the mbuf pool is sized from the rings, and hugepages from the pool
MAX_RATE_PPS = 1e10  # far above any core's reach; larger numbers are typos, and overflow the generator's pacing
MIN_STEP_SECONDS = 1e-3  # the generator counts a step in whole TSC cycles: one under a cycle is 0, and divides by it
MAX_SPEC_BYTES = 10 << 20
# Values in the document, an alias (*name) counted as often as it is used: a spec of 128 NFs needs a few thousand.
# Bounds the time to read a spec (PyYAML composes ~20k values a second) and refuses alias bombs, whose few
# aliases stand for billions of values once anything walks them.
MAX_VALUES = 50_000


def data_plane_limit(name: str) -> int:
    """One of the data plane's sizes as its catalog declares them (`max_hops`: the NFs of one chain, the hop record
    in the packet metadata; `max_nfs`: the NFs a run holds at once, one hop stamp each; `max_burst`; `max_kernel_mux`:
    frames per system call)."""
    return catalog.catalog()["limits"][name]


def _at_most_limit(name: str, value: int) -> int:
    limit = data_plane_limit(name)
    if value > limit:
        raise ValueError(f"Input should be less than or equal to {limit}")  # pydantic's own words for `le`
    return value


def _limit_as_maximum(name: str, schema: dict) -> None:
    schema["maximum"] = data_plane_limit(name)


def bounded_by(name: str, minimum: int):
    """An int of at least `minimum` and at most the data plane's limit `name`: checked when a spec is read, and the
    JSON Schema's minimum and maximum."""
    return Annotated[
        int,
        Field(ge=minimum, json_schema_extra=partial(_limit_as_maximum, name)),
        AfterValidator(partial(_at_most_limit, name)),
    ]
