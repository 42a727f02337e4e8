"""auto's switch costs from this machine: the switches its model charges each policy (a sched_yield hand-off, a
SCHED_FIFO priority switch, a user-level thread switch, a sleeping worker's wake-up), measured once per machine and
NF core by `tandem-primitives --switch-costs` (a few seconds), cached, and filled into the scheduler's options that
the spec leaves unset. Hosts differ by up to 2x, so the defaults (../DESIGN.md's table) only stand in where a switch
cannot be measured here, saying why."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from controlplane.machine import primitive_latencies
from controlplane.machine.description import machine_description

CACHE_PATH = Path(os.environ.get("TANDEM_CACHE_DIR", Path.home() / ".cache" / "tandem")) / "switch-costs.json"
CACHE_FORMAT = 1

# Each option measured here: the measurement it is taken from, and how many of that measurement it is. NFVnice's
# sleep and wake-up of an NF is two hand-offs on its core (the one asleep and the one woken), as the default says.
MEASURED_OPTIONS = {
    "yield_ns": ("yield_handoff", 1),
    "wakeup_ns": ("yield_handoff", 2),
    "priority_switch_ns": ("priority_switch", 1),
    "thread_switch_ns": ("user_level_switch", 1),
    "sleeper_wakeup_ns": ("idle_wake_1ms", 1),
}
OPTION_MAX_NS = 1e7  # the options' upper bound in the data plane's schema (schedulers/auto/auto.cc)


def _cores_key(core: int, other_core: int) -> str:
    return f"core {core} from core {other_core}"


def _load() -> dict:
    """This machine's cached measurements by cores; empty where there are none or they are another machine's."""
    try:
        cache = json.loads(CACHE_PATH.read_text())
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(cache, dict)
        or cache.get("format") != CACHE_FORMAT
        or cache.get("machine") != machine_description()
    ):
        return {}
    return cache.get("by_cores", {})


def _save(by_cores: dict) -> None:
    document = {"format": CACHE_FORMAT, "machine": machine_description(), "by_cores": by_cores}
    try:
        CACHE_PATH.parent.mkdir(parents=True, exist_ok=True)
        CACHE_PATH.write_text(json.dumps(document, indent=1))
    except OSError as error:
        print(f"tandem: note: cannot write {CACHE_PATH}: {error.strerror}")


def measured(core: int, other_core: int, say=None) -> tuple[dict, str]:
    """This machine's switches on `core` (the other side on `other_core`): the tool's measurements, and "cache" or
    "measured"."""
    by_cores = _load()
    key = _cores_key(core, other_core)
    if key in by_cores:
        return by_cores[key], "cache"
    if say:
        say(f"measuring this machine's switches on core {core} for auto's model (once; cached in {CACHE_PATH})...")
    results = primitive_latencies.run_tool(core, other_core, "--switch-costs")
    entry = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        **{name: results[name] for name in ("yield_handoff", "priority_switch", "user_level_switch")},
        "idle_wake_1ms": results["idle_wake"]["1 ms"],
    }
    by_cores[key] = entry
    _save(by_cores)
    return entry, "measured"


def filled_options(given: dict, measurements: dict, origin: str) -> tuple[dict, dict]:
    """The options with every measured switch the spec leaves unset filled in, and where each came from:
    {option: {"ns": value, "source": "spec" | "measured" | "cache", "from": ...} or {"source": "default", "why": ...}}.
    """
    options = dict(given)
    sources = {}
    for option, (name, times) in MEASURED_OPTIONS.items():
        if option in given:
            sources[option] = {"ns": given[option], "source": "spec"}
            continue
        measurement = measurements.get(name, {"unsupported": "not measured"})
        if "median_ns" not in measurement:
            sources[option] = {"source": "default", "why": f"{name}: {measurement['unsupported']}"}
            continue
        value = round(times * measurement["median_ns"], 1)
        if value > OPTION_MAX_NS:  # a switch not seen within the probe's 50 ms is no cost for the model
            sources[option] = {"source": "default", "why": f"{name}: {value:.0f} ns is beyond the option's range"}
            continue
        options[option] = value
        sources[option] = {
            "ns": options[option],
            "source": origin,
            "from": f"{name} {'x' + str(times) + ' ' if times > 1 else ''}on {measurements['date']}",
        }
    return options, sources


def _first_nf_core(config: dict) -> int:
    cores = sorted({nf["core"] for chain in config["chains"] for nf in chain["nfs"] if nf.get("core", -1) >= 0})
    return cores[0] if cores else (os.cpu_count() or 1) - 1


def measured_for(config: dict, say=None) -> tuple[dict, str]:
    """This machine's switches on the config's first NF core, from the control core: cached, or measured now."""
    return measured(_first_nf_core(config), config["control_core"], say=say)


def cached_into(options: dict, running: dict) -> dict:
    """A live switch's options with the unset switch costs filled in from this machine's cache for the running
    config's NF core; as given where nothing is cached: measuring would spin on the NFs' core while they run."""
    entry = _load().get(_cores_key(_first_nf_core(running), running["control_core"]))
    return filled_options(options, entry, "cache")[0] if entry else options


def with_switch_costs(config: dict, say=None) -> tuple[dict, dict]:
    """The config with its scheduler's unset switch costs filled in from this machine's measurement on its first NF
    core, and where each came from. Nothing is measured when the spec gives every one."""
    scheduler = config["scheduler"]
    given = scheduler.get("options", {})
    if all(option in given for option in MEASURED_OPTIONS):
        return config, {option: {"ns": given[option], "source": "spec"} for option in MEASURED_OPTIONS}
    measurements, origin = measured_for(config, say=say)
    options, sources = filled_options(given, measurements, origin)
    return dict(config, scheduler=dict(scheduler, options=options)), sources
