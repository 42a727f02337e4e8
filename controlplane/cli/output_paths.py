"""Output paths checked before a command's work: a mistyped folder costs an exit 2 now, not the results at the end."""

from __future__ import annotations

import os
from pathlib import Path

from controlplane.errors import SpecError

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
