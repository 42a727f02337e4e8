"""A run from a loaded spec to its results, in order: check with the data plane, place (placement: auto or
fewest_cores, and spare instances without a core), cost (schedulers that need cycle costs or this machine's switch
costs), launch. The runner only launches; what comes before it lives here."""

from __future__ import annotations

import json
from collections.abc import Callable

from controlplane.errors import SpecError
from controlplane.launch import runner
from controlplane.machine.switch_costs import measured_for, with_switch_costs
from controlplane.planning.placement import place_config, placed
from controlplane.planning.profile import with_costs
from controlplane.planning.spare_cores import place_spares
from controlplane.spec import catalog
from controlplane.spec.ready_for import FIELD, shown
from controlplane.terminal.progress import say


def run(
    config: dict,
    source: str,
    on_event: Callable[[dict], None] | None = None,
    additions: Callable[[dict], object] | None = None,
) -> runner.LaunchOutcome:
    """Runs `config` (see spec.deployment.run_config); every machine change is undone before returning. `additions`:
    a service's, as runner.launch takes it."""
    verdict = catalog.check(config, source)
    checked = config
    also = ready_requirements(config, source, verdict["requirements"])  # their errors before any measurement
    placement = None
    if config.get("placement") in ("auto", "fewest_cores"):
        objective = "throughput" if config["placement"] == "auto" else "fewest_cores"
        placement, _ = place_config(config, source, verdict["options"], require_all=True, say=say, objective=objective)
        config = placed(config, placement)
        verdict = catalog.check(config, source)  # the NFs' cores changed
    config, spare_notes = place_spares(config, source, say=say)
    if spare_notes:
        verdict = catalog.check(config, source)  # spare instances may have moved
    switches = None
    if verdict["requirements"].get("switch_costs"):  # the run's own scheduler's: a service's others keep defaults
        config, switches = with_switch_costs(config, say=say)
        verdict = catalog.check(config, source)  # the launch takes the scheduler's options as the check resolved them
    if config is not checked:  # placed, spares moved or switch costs added: the NFs' cores or the options changed
        also = ready_requirements(config, source, verdict["requirements"])
    verdict = dict(verdict, requirements=also | verdict["requirements"])
    if also.get("switch_costs") and switches is None:  # measured now, before traffic: a live switch reads them
        measured_for(config, say=say)
    costs = None
    if verdict["requirements"].get("cycle_costs"):
        config, costs = with_costs(config, source, say=say)
    outcome = runner.launch(config, verdict, on_event, additions)
    outcome.notes = spare_notes + outcome.notes
    if outcome.results is not None:
        if costs is not None:
            outcome.results["cycle_costs"] = costs
        if switches is not None:
            outcome.results["switch_costs"] = switches
        if placement is not None:
            outcome.results["placement"] = placement
    return outcome


def ready_requirements(config: dict, source: str, own: dict) -> dict:
    """What a service's schedulers to switch to (config's ready_for, [{name, options}]) need of the machine, so that
    it is prepared for them too; `own`: what the run's scheduler needs. A SpecError naming --ready-for where one's
    options are wrong, or where two need one resource set apart (the machine has one RR timeslice)."""
    needs, needed_by = {}, {resource: "the run's scheduler" for resource in own}
    for scheduler in config.get("ready_for", []):
        name = shown(scheduler)
        try:
            also = catalog.check(dict(config, scheduler=scheduler), source)["requirements"]
        except SpecError as error:
            raise SpecError(
                FIELD, [(name + (f": {path}" if path else ""), why) for path, why in error.problems]
            ) from None
        for resource, value in also.items():
            held = own.get(resource, needs.get(resource, value))
            if held != value:
                why = f"needs {resource} {json.dumps(value)}, where {needed_by[resource]} needs {json.dumps(held)}"
                raise SpecError(FIELD, [(name, why + ": the machine has one")])
            needs[resource] = value
            needed_by.setdefault(resource, name)
    return needs
