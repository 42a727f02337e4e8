"""The control API's operations and messages, as pydantic models: the server answers with them, the client reads
them, and the OpenAPI document (/openapi.json, docs/service.md) is made from them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer figures a client does not know yet are kept, not refused


class ChainStatus(_Message):
    name: str
    generated: int  # packets that entered the chain: generated, or received on its port
    delivered: int
    delivered_mpps: float | None = None  # over the last report's interval (250 ms); None until there are two
    entry_backpressure: int
    latency_p50_us_under: float | None = None  # the latency histogram's bound under which the median packet stayed
    latency_p99_us_under: float | None = None


class NfStatus(_Message):
    name: str
    chain: str
    pid: int | None = None
    core: int | None = None
    packets_in: int
    packets_dropped: int
    in_mpps: float | None = None


class Status(_Message):
    name: str
    scheduler: str
    phase: str  # starting, measure, stopping
    t_s: float
    chains: list[ChainStatus]
    nfs: list[NfStatus]
    drops_by_ring: dict[str, int] = {}
    ports: list[dict] = []
    scheduler_live: dict = {}


class StopReply(_Message):
    stopping: bool


class ErrorReply(_Message):
    error: str
    field: str  # what of the request is wrong: path, query, method, body, request (not HTTP the server reads)


# Path -> method.
ROUTES = {"/status": "GET", "/stop": "POST", "/openapi.json": "GET"}
_REPLIES = {"/status": Status, "/stop": StopReply}


def openapi() -> dict:
    """The API's OpenAPI 3.1 document, its schemas the models above."""
    schemas = {model.__name__: model.model_json_schema(ref_template="#/components/schemas/{model}") for model in
               (Status, StopReply, ErrorReply)}  # fmt: skip
    for schema in list(schemas.values()):
        schemas.update(schema.pop("$defs", {}))
    paths = {}
    for path, method in ROUTES.items():
        reply = _REPLIES.get(path)
        content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{reply.__name__}"} if reply else {}}}
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorReply"}}}
        paths[path] = {
            method.lower(): {
                "responses": {
                    "200" if method == "GET" else "202": {"description": "done", "content": content},
                    "4XX": {"description": "a malformed request, naming what is wrong", "content": error},
                }
            }
        }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Tandem control API", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }
