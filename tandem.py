"""Tandem's Python API: `from tandem import Spec, run, compare` (controlplane/api.py). Scripts run with the
repository's environment, `.venv/bin/python`, which scripts/setup.sh points at this directory."""

from controlplane.api import (
    Comparison,
    MetricsServer,
    RunOutcome,
    RunResults,
    Spec,
    compare,
    connect,
    load_spec,
    run,
    serve,
)

__all__ = [
    "Spec",
    "RunResults",
    "RunOutcome",
    "Comparison",
    "MetricsServer",
    "load_spec",
    "run",
    "compare",
    "serve",
    "connect",
]
