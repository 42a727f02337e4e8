"""What several commands share: writing their files, checking a spec's options for other schedulers."""

from __future__ import annotations

import json
import os
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


# The options that name a file a command writes when its work is done.
OUTPUT_OPTIONS = ("json", "csv", "plot", "capture", "out")


def check_outputs(args) -> None:
    """Every file the command will write can be written: checked before the work, so that a mistyped folder costs an
    exit 2 now rather than a whole experiment's results at its end. Nothing is created or truncated here."""
    for option in OUTPUT_OPTIONS:
        path = getattr(args, option, None)
        if not isinstance(path, str):  # absent, or a flag (`nfs --json`)
            continue
        target = Path(path)
        folder = target.parent
        if target.is_dir():
            problem = "is a folder"
        elif not folder.is_dir():
            problem = f"its folder {folder} does not exist"
        elif not os.access(target if target.exists() else folder, os.W_OK):
            problem = "permission denied"
        else:
            continue
        raise SpecError(f"--{option}", [("", f"cannot write {path}: {problem}")])


def write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as error:
        raise TandemError(f"cannot write {path}: {error.strerror}") from None


def write_json(path: str, document: dict) -> None:
    write_text(path, json.dumps(document, indent=2))
