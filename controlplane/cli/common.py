"""What several commands share: writing their files, checking a spec's options for other schedulers."""

from __future__ import annotations

import json
from pathlib import Path

from controlplane import api
from controlplane.errors import SpecError, TandemError
from controlplane.spec import catalog
from controlplane.spec.deployment import run_config


def check_scheduler_options(spec, source: str) -> None:
    """The spec's options for other schedulers are checked like its own, named by where they were given."""
    api.check_schedulers(list(spec.scheduler_options), source, "scheduler_options")
    for name in spec.scheduler_options:
        try:
            catalog.check(run_config(spec, name), source)
        except SpecError as error:
            raise SpecError(
                source,
                [
                    (path.replace("scheduler", f"scheduler_options.{name}", 1), message)
                    for path, message in error.problems
                ],
            ) from None


def write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as error:
        raise TandemError(f"cannot write {path}: {error.strerror}") from None


def write_json(path: str, document: dict) -> None:
    write_text(path, json.dumps(document, indent=2))
