"""The schedulers a service is made ready for (`serve --ready-for`): each with the options a live switch will give it,
since what the machine must prepare (NF costs, a cgroup, an RR timeslice) can depend on them."""

from __future__ import annotations

import json

from pydantic import ValidationError

from controlplane.errors import SpecError
from controlplane.spec.loading import parse_yaml
from controlplane.spec.models import SchedulerSpec

FIELD = "--ready-for"


def option_pair(pair: str, field: str, of: str = "") -> tuple[str, object]:
    """`KEY=VALUE` as (key, its YAML value), as `ctl scheduler --option` and `--ready-for` take a scheduler's option;
    a SpecError naming `field` where it is not one (`of`: whose option, in the message)."""
    key, equals, value = pair.partition("=")
    if not equals or not key:
        raise SpecError(field, [("", f"{pair!r}{f' (of {of})' if of else ''} is not KEY=VALUE")])
    return key, parse_yaml(value, f"{field} {of}:{key}" if of else f"{field} {key}")


def parse_ready_for(text: str) -> list[dict]:
    """`NAME[:KEY=VALUE,...][,NAME...]` as [{name, options}]: a comma-separated item with `=` and no `:` is one more
    option of the scheduler before it (a scheduler's name has no `=`), each value a YAML value as `ctl scheduler
    --option` takes it. `unis:backend=freezer,nfvnice` is unis with its freezer backend, and nfvnice."""
    schedulers: list[dict] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, colon, pair = item.partition(":")
        if not colon and "=" in item:
            if not schedulers:
                raise SpecError(FIELD, [("", f"{item!r}: an option before any scheduler's name (give NAME:{item})")])
            name, pair = "", item
        elif not name:
            raise SpecError(FIELD, [("", f"{item!r}: give the scheduler's name before its options")])
        else:
            schedulers.append({"name": name, "options": {}})
        if pair:
            key, value = option_pair(pair, FIELD, schedulers[-1]["name"])
            schedulers[-1]["options"][key] = value
    return schedulers


def ready_for_schedulers(items: list[str | dict]) -> list[dict]:
    """A caller's list, as [{name, options}]: a string in --ready-for's form (a name alone, or with its options), or
    a mapping {name, options}."""
    schedulers = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            schedulers += parse_ready_for(item)
            continue
        try:
            schedulers.append(SchedulerSpec.model_validate(item).model_dump())
        except ValidationError as error:
            problem = error.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise SpecError(FIELD, [(f"[{index}]" + (f".{where}" if where else ""), problem["msg"])]) from None
    return schedulers


def shown(scheduler: dict) -> str:
    """A scheduler as --ready-for names it."""
    options = ",".join(
        f"{key}={value if isinstance(value, str) else json.dumps(value)}" for key, value in scheduler["options"].items()
    )
    return scheduler["name"] + (f":{options}" if options else "")
