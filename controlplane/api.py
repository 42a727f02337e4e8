"""Tandem's Python API (re-exported by tandem.py: `from tandem import Spec, run, compare`): run and compare specs
from a script and get typed results, the models the CLI writes its JSON from."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from controlplane.errors import SpecError, TandemError
from controlplane.experiment import pipeline
from controlplane.experiment.compare import compare as compare_runs
from controlplane.experiment.compare import fan_out, with_profiling
from controlplane.launch.control_client import DEFAULT_SOCKET, Control
from controlplane.launch.control_server import read_token, require_token_beyond_loopback
from controlplane.planning.profile import cached_costs
from controlplane.results.live_metrics import MetricsServer, parse_listen_address
from controlplane.results.model import Comparison, RunOutcome, RunResults
from controlplane.sfc.sfc_request import is_sfc_request
from controlplane.sfc.spec_or_request import compose_request, load_spec_or_request
from controlplane.spec import catalog
from controlplane.spec.deployment import run_config
from controlplane.spec.live_additions import LiveAdditions
from controlplane.spec.loading import spec_from_document
from controlplane.spec.models import Spec
from controlplane.spec.ready_for import ready_for_schedulers

SpecLike = Spec | dict | str | os.PathLike
DICT_SOURCE = (
    "<dict>"  # how errors name a spec given as a dict; its relative files resolve against the working directory
)


def load_spec(spec: SpecLike) -> Spec:
    """A checked Spec from a file (a spec or an SFC request, composed), a dict or a Spec; SpecError names the field."""
    return _load(spec)[0]


def _load(spec: SpecLike, source: str | None = None, *, service: bool = False) -> tuple[Spec, str]:
    """A checked Spec and the name errors use for it, from a file (a spec or an SFC request), a dict or a Spec
    (`source`: the file a Spec was read from, for messages); a `service`'s lab may wait for chains added live."""
    if isinstance(spec, Spec):
        return spec, source or f"<spec {spec.name}>"
    if isinstance(spec, dict):
        if is_sfc_request(spec):
            return compose_request(DICT_SOURCE, spec)[0], DICT_SOURCE
        return spec_from_document(spec, DICT_SOURCE, service=service), DICT_SOURCE
    path = os.fspath(spec)
    return load_spec_or_request(path, service=service), path


def check_schedulers(names: list[str], source: str, field: str = "--scheduler") -> None:
    known = catalog.scheduler_names()
    unknown = [name for name in names if name not in known]
    if unknown:
        raise SpecError(
            source, [(field, f"unknown scheduler {', '.join(repr(n) for n in unknown)} (known: {', '.join(known)})")]
        )


def _accepting(spec: Spec, source: str, names: list[str], named: bool) -> list[str]:
    """The schedulers that accept the spec, asked before the first run rather than when each one's turn comes: one the
    caller named that refuses it is an error (its reasons, exit 2); one of the default list is left out, and standard
    error says why (kernel-I/O NFs and external NFs run under some schedulers only)."""
    accepting, refusals = [], []
    for name in names:
        try:
            catalog.check(run_config(spec, name), source)
            accepting.append(name)
        except SpecError as refusal:
            refusals.append((name, refusal))
    if refusals and (named or not accepting):
        raise SpecError(source, [problem for _, refusal in refusals for problem in refusal.problems])
    for name, refusal in refusals:
        reasons = "; ".join(message for _, message in refusal.problems)
        print(f"{source}: leaving out {name}, which cannot run this spec: {reasons}", file=sys.stderr)
    return accepting


def _every_scheduler(spec: Spec) -> list[str]:
    """Every scheduler this build has; per_core only where the spec says which module runs each core (its scheduler,
    or scheduler_options.per_core): it has no default to compare."""
    given = {spec.scheduler.name, *spec.scheduler_options}
    return [name for name in catalog.scheduler_names() if name != "per_core" or name in given]


def _serving(metrics: str | MetricsServer | None):
    """The metrics server to report to: one the caller keeps open (several calls), one opened for this call, or none."""
    if metrics is None or isinstance(metrics, MetricsServer):
        return contextlib.nullcontext(metrics)
    return MetricsServer(metrics)


def run(
    spec: SpecLike,
    scheduler: str | None = None,
    duration: float | None = None,
    *,
    capture: dict | None = None,
    metrics: str | MetricsServer | None = None,
    on_event: Callable[[dict], None] | None = None,
    profile: bool | str = False,
    source: str | None = None,
) -> RunOutcome:
    """Runs a spec once (placed and costed as its scheduler needs) and returns how it ended, with typed results.
    `metrics`: "[HOST]:PORT" to serve live Prometheus metrics while it runs. `on_event`: each progress event of the
    data plane. `profile`: trace the latency-sampled packets hop by hop (each chain's results get a latency_breakdown;
    ./tandem explain reads it) and count each NF process (perf_event_open); "hops": the tracing alone. Bad input raises
    SpecError (the CLI's exit 2); every machine change is undone before returning."""
    loaded, source = _load(spec, source)
    if scheduler:
        check_schedulers([scheduler], source)
    config = run_config(loaded, scheduler, duration)
    if capture:
        config["capture"] = capture
    if profile:
        with_profiling(config, counters=profile != "hops")
    with _serving(metrics) as server:
        observers = [on_event] if on_event else []
        if server is not None:
            observers.append(server.collector.follow(config, f"{config['scheduler']['name']}#1", loaded.name))
        outcome = pipeline.run(config, source, fan_out(observers))
    results = _typed(RunResults, outcome.results) if outcome.results is not None else None
    return RunOutcome(results=results, exit_status=outcome.exit_status, error=outcome.error, notes=outcome.notes)


def serve(
    spec: SpecLike,
    scheduler: str | None = None,
    *,
    socket: str | Path | None = None,
    on_event: Callable[[dict], None] | None = None,
    source: str | None = None,
    ready_for: list[str | dict] | None = None,
    listen: str | None = None,
    token_file: str | Path | None = None,
) -> RunOutcome:
    """Runs a spec as a service: its traffic (ports, a lab, or the generator) flows until `stop` on its control API
    (connect(socket)), SIGTERM or Ctrl-C; then the chains drain and the whole results come back. A lab's clients
    ending do not end it. `ready_for`: schedulers it may be switched to live (set_scheduler), whose needs (NF costs,
    cgroups, RT settings) are prepared at start too, each a name, `NAME:KEY=VALUE,...` or {name, options}: with the
    options the switch will give it, where they need more (nfvnice's cost: blackbox needs the NFs' costs). `listen`
    ("[HOST]:PORT"; host 127.0.0.1 unless given): the control API on TCP as well, where every request must carry the
    token of `token_file` (a file of mode 0600) if one is given, and must if the host is not a loopback address. Bad
    input raises SpecError or SetupError; every machine change is undone before returning."""
    loaded, source = _load(spec, source, service=True)
    if scheduler:
        check_schedulers([scheduler], source)
    ready = ready_for_schedulers(ready_for or [])
    check_schedulers([scheduler["name"] for scheduler in ready], source, "--ready-for")
    config = run_config(loaded, scheduler, None)
    config |= {"duration": 0, "warmup": 0, "serve": True, "live_metrics": True, "ready_for": ready}
    config["control_socket"] = str(socket or DEFAULT_SOCKET)
    if token_file is not None:
        read_token(token_file)  # its errors before anything runs
        config["control_token_file"] = str(Path(token_file).resolve())
    if listen is not None:
        host, port = parse_listen_address(listen, "--listen")
        host = "127.0.0.1" if listen.startswith(":") else host  # the service's own listener: this machine's alone
        require_token_beyond_loopback(host, token_file is not None)
        config["control_listen"] = [host, port]
    # An added chain's NFs take their costs from the running NFs, else from what the profiler measured before.
    outcome = pipeline.run(config, source, on_event, functools.partial(LiveAdditions, loaded, known_costs=cached_costs))
    results = _typed(RunResults, outcome.results) if outcome.results is not None else None
    return RunOutcome(results=results, exit_status=outcome.exit_status, error=outcome.error, notes=outcome.notes)


def connect(socket: str | Path | None = None) -> Control:
    """The control API of a running service (./tandem serve), by its socket: .status(), .stop()."""
    return Control(socket or DEFAULT_SOCKET)


def compare(
    spec: SpecLike,
    schedulers: list[str] | None = None,
    repeat: int = 3,
    duration: float | None = None,
    *,
    metrics: str | MetricsServer | None = None,
    quiet: bool = True,
    profile: bool = False,
    ceiling: bool = True,
    source: str | None = None,
) -> Comparison:
    """Runs a spec under each scheduler (default: every one this build has) in `repeat` rounds, each scheduler once a
    round, and returns every run's results, each scheduler's medians, its runs' ratios to rtc's run of the same round
    (vs_rtc; median(name, "vs_rtc")) and whether its runs differ by more than 1.5x (noisy). `quiet=False` shows each
    run's progress on standard error. `ceiling`: also run rtc at each batch size 32...1024 once a round, the
    comparison's second ceiling (ceilings.best_rtc: the best of the batches' medians)."""
    loaded, source = _load(spec, source)
    named = schedulers is not None
    schedulers = schedulers or _every_scheduler(loaded)
    check_schedulers(schedulers, source)
    schedulers = _accepting(loaded, source, schedulers, named)
    with _serving(metrics) as server:
        comparison, status = compare_runs(
            loaded,
            source,
            schedulers,
            repeat,
            duration,
            quiet,
            server.collector if server is not None else None,
            profile,
            ceiling,
        )
    return _typed(Comparison, dict(comparison, exit_status=status))


def _typed(model, document: dict):
    """`document` as `model`; one that does not fit is a bug between the data plane and the models, said as such."""
    try:
        return model.model_validate(document)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:5])
        raise TandemError(
            f"the results do not fit Tandem's results model ({model.__name__}): {problems}. "
            "This is a bug in Tandem; TANDEM_DEBUG=1 shows where"
        ) from error


__all__ = ["Spec", "RunResults", "RunOutcome", "Comparison", "MetricsServer", "load_spec", "run", "compare"]
