"""The control API's operations and messages, as pydantic models: the server answers with them, the client reads
them, and the OpenAPI document (/openapi.json, docs/service.md) is made from them."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from controlplane.spec.models import ChainSpec
from controlplane.spec.port_models import PortSpec


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer figures a client does not know yet are kept, not refused


class ChainStatus(_Message):
    name: str
    generated: int  # packets that entered the chain: generated, or received on its port
    delivered: int
    delivered_mpps: float | None = None  # over the last report's interval (250 ms); None until there are two
    entry_backpressure: int
    generator_fell_behind: int = 0  # packets its rate had due that the generator gave up, too far behind to make up
    latency_p50_us_under: float | None = None  # the latency histogram's bound under which the median packet stayed
    latency_p99_us_under: float | None = None
    removed: bool = False  # removed from the service (DELETE /chains/{name}): its NFs stopped, nothing enters it


class NfStatus(_Message):
    name: str
    chain: str
    pid: int | None = None
    core: int | None = None
    packets_in: int
    packets_dropped: int
    in_mpps: float | None = None
    restarts: int = 0  # times its process was started again after it died (its spec's `restart`)
    down: bool = False  # its process died and is not back yet
    removed: bool = False  # its chain was removed: its process stopped


class Status(_Message):
    name: str
    scheduler: str
    scheduler_by_core: dict[int, str] = {}  # where per_core runs: each NF core's module
    phase: str  # starting, measure, stopping
    t_s: float
    chains: list[ChainStatus]
    nfs: list[NfStatus]
    drops_by_ring: dict[str, int] = {}
    ports: list[dict] = []
    scheduler_live: dict = {}
    changes: list[dict] = []  # every live change answered so far, in order
    lab: list[dict] = []  # a lab's hosts: name, network namespace, address (with its prefix)


class StopReply(_Message):
    stopping: bool


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a field the API does not know is refused by name, never ignored


class ArgsChange(_Request):
    """PUT /nfs/{name}/args: the NF's new arguments, whole (as its `args` in the spec), checked as the spec's are."""

    args: dict


class SchedulerChange(_Request):
    """PUT /scheduler: the scheduler module to switch to, with its options (defaults for those left out)."""

    name: str = Field(min_length=1, max_length=64)
    options: dict = {}
    # One core's module only (the others keep theirs: the service then runs per_core); none: every core's.
    core: int | None = Field(None, ge=0, le=4095)


class InstancesChange(_Request):
    """PUT /nfs/{name}/instances: how many of a scaled NF's prepared instances take its flows from now on (its rule
    paused), or `auto` to give the count back to its rule."""

    instances: Annotated[int, Field(ge=1, le=8)] | Literal["auto"]


class CoreChange(_Request):
    """PUT /nfs/{name}/core: the NF moved to another core (any the machine gives Tandem but the control core; one
    none of the NFs had is reserved for them) while traffic flows: the NFs re-laid out by a fresh module of the
    running scheduler, nothing lost."""

    core: Annotated[int, Field(ge=0, le=4095)]


class ChainRemoval(_Request):
    """DELETE /chains/{name}: the chain's entry closed, what is inside drained to the sink, its NF processes stopped;
    the other chains' traffic goes on. No fields (an empty body, or {})."""


class ChainAddition(_Request):
    """POST /chains: a chain to add, as a spec's `chains` entry; checked as if the spec had had it, its NFs on the
    service's NF cores, its traffic from the generator. Its processes start while the others' traffic flows."""

    chain: ChainSpec


class PortAddition(_Request):
    """POST /ports: a port to add, as a spec's `ports` entry (a packet socket on an interface, a TAP device: no
    driver that reads or makes files, no PCI device); checked as if the spec had had it. Chains added after it may
    take from it and send to it."""

    port: PortSpec


class PortRemoval(_Request):
    """DELETE /ports/{name}: a port no chain takes from or sends to any more (remove those chains first) closed, its
    counters kept in the results; a VXLAN Tandem made for it removed. Its name stays taken. No fields."""


class ChangeReply(_Message):
    """A live change's outcome: applied (with what it cost), refused (naming the field), or pending (not taken yet:
    an NF takes new arguments before its next batch; `status` shows it once it has)."""

    id: int | None = None
    op: str
    state: str  # applied, refused, pending
    errors: list[dict] = []  # refused: [{path, message}]
    t_requested: float | None = None  # seconds since the service started
    t_done: float | None = None
    ring_drops_during: int | None = None  # packets full rings dropped between the request and the change
    ring_drops_by_ring: dict[str, int] = {}  # of those, by ring: the rings that dropped
    build_us: float | None = None  # set_args: how long the new instance took to build (the old one ran on meanwhile)
    state_reset: bool | None = None  # set_args: a stateful NF's new instance starts with empty tables
    switch_us: float | None = None  # set_scheduler: the old module detached, the new attached
    # set_scheduler to one that lays the NFs out in other processes: the new processes started beside the running
    # ones (staged_ms, the traffic flowing; 0 where the module plans them only once the NFs drained), then the entries
    # held (nothing generated or taken from the ports meanwhile, nothing lost), the NFs drained (drain_ms), the old
    # processes gone (leave_ms), the new ones going on (start_ms, `workers`), the entries let go: held_ms in all.
    relayout: bool | None = None
    staged_ms: float | None = None
    ring_drops_while_held: int | None = None  # of ring_drops_during, those once the entries were held (the switch's)
    leave_ms: float | None = None
    held_ms: float | None = None
    drain_restarts: int | None = None  # the old processes started again to finish a drain their leaving upset
    nf: str | None = None  # set_args, set_instances, move_nf: the NF changed
    core: int | None = None  # move_nf: the core the NF runs on now; set_scheduler: the core switched alone
    core_before: int | None = None
    instances: int | None = None  # set_instances: the instances its flows are spread over now
    instances_before: int | None = None
    chain: str | None = None  # remove_chain: the chain removed
    nfs_stopped: str | None = None  # its NFs, whose processes left their loops
    drained: bool | None = None  # everything inside reached the sink (else what is left stays counted in flight)
    drain_ms: float | None = None  # from the entry's close to the processes told to leave
    nfs_started: str | None = None  # add_chain: its NFs, whose processes started
    workers: list[dict] | None = None  # their processes: name, pid, core, NFs
    start_ms: float | None = None  # from the request to the last process attached
    join_us: float | None = None  # the chain joined to the run: the scheduler module re-attached with it
    port: str | None = None  # add_port: the port opened; remove_port: the port closed
    open_us: float | None = None  # how long its device took to open (on a thread of the manager's, the loop going on)
    close_us: float | None = None  # remove_port: how long its device took to close (likewise)
    report: dict | None = None  # remove_port: the port's last report (as the results' `ports` entry)
    # What it cost the traffic, measured by the sink 300 ms after (status and the results have it; a reply comes
    # before): deficit_ms (delivery short of the rate before, in ms of that rate), ring_drops_in_window and
    # latency_max_during_us (from the request to 300 ms after the change), ring_drops_before and
    # latency_max_before_us (the 200 ms before the request); generator_fell_behind_in_window (_before): packets due
    # that the generator gave up, a stalled control core having left it more than 4096 packets behind.
    cost: dict | None = None


class ErrorReply(_Message):
    error: str
    field: str  # what of the request is wrong: path, query, method, body, request (not HTTP the server reads)


# Path (a template: {name} is an NF's name) -> method.
ROUTES = {
    "/status": "GET",
    "/stop": "POST",
    "/openapi.json": "GET",
    "/nfs/{name}/args": "PUT",
    "/scheduler": "PUT",
    "/nfs/{name}/instances": "PUT",
    "/nfs/{name}/core": "PUT",
    "/chains/{name}": "DELETE",
    "/chains": "POST",
    "/ports": "POST",
    "/ports/{name}": "DELETE",
}
_REPLIES = {"/status": Status, "/stop": StopReply} | dict.fromkeys(
    (
        "/nfs/{name}/args",
        "/scheduler",
        "/nfs/{name}/instances",
        "/nfs/{name}/core",
        "/chains/{name}",
        "/chains",
        "/ports",
        "/ports/{name}",
    ),
    ChangeReply,
)
REQUESTS = {
    "/nfs/{name}/args": ArgsChange,
    "/scheduler": SchedulerChange,
    "/nfs/{name}/instances": InstancesChange,
    "/nfs/{name}/core": CoreChange,
    "/chains/{name}": ChainRemoval,
    "/chains": ChainAddition,
    "/ports": PortAddition,
    "/ports/{name}": PortRemoval,
}
_NAME = r"[A-Za-z0-9_.-]{1,64}"  # an NF's name, as the spec allows it


def match_route(path: str) -> tuple[str, dict[str, str]] | None:
    """The route template `path` is an instance of, with its parameters; None for no route."""
    for template in ROUTES:
        pattern = "^" + re.escape(template).replace(re.escape("{name}"), f"(?P<name>{_NAME})") + "$"
        if match := re.match(pattern, path):
            return template, match.groupdict()
    return None


def openapi() -> dict:
    """The API's OpenAPI 3.1 document, its schemas the models above."""
    models = (Status, StopReply, ErrorReply, ChangeReply, *REQUESTS.values())
    schemas = {model.__name__: model.model_json_schema(ref_template="#/components/schemas/{model}") for model in models}
    for schema in list(schemas.values()):
        schemas.update(schema.pop("$defs", {}))
    paths = {}
    for path, method in ROUTES.items():
        reply = _REPLIES.get(path)
        content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{reply.__name__}"} if reply else {}}}
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorReply"}}}
        operation = {
            "responses": {
                "202" if path == "/stop" else "200": {"description": "done", "content": content},
                "4XX": {"description": "a malformed request, naming what is wrong", "content": error},
            }
        }
        if path in REQUESTS:
            body = {"$ref": f"#/components/schemas/{REQUESTS[path].__name__}"}
            operation["requestBody"] = {
                "required": bool(REQUESTS[path].model_fields),
                "content": {"application/json": {"schema": body}},
            }
            operation["responses"]["202"] = {"description": "not taken yet (pending)", "content": content}
        if "{name}" in path:
            operation["parameters"] = [
                {"name": "name", "in": "path", "required": True, "schema": {"type": "string", "pattern": _NAME}}
            ]
        paths[path] = {method.lower(): operation}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Tandem control API", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }
