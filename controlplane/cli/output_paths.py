"""Output paths checked before a command's work: a mistyped folder costs an exit 2 now, not the results at the end."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from controlplane.errors import SpecError

# The options that name a file a command writes when its work is done.
OUTPUT_OPTIONS = ("json", "csv", "plot", "capture", "out")


def why_not_writable(target: Path) -> str | None:
    """Why `target` cannot be written, or None. Tried, not inferred from its mode: root passes every permission check,
    yet /proc or /sys take no new file and a read-only mount none at all. An existing file is opened for appending
    (its contents and times kept), a new one made as a scratch file beside it and removed: nothing stays."""
    try:
        if target.exists():
            os.close(os.open(target, os.O_WRONLY | os.O_APPEND))
        else:
            handle, scratch = tempfile.mkstemp(prefix=".tandem-output-check-", dir=target.parent)
            os.close(handle)
            os.unlink(scratch)
    except OSError as error:
        return error.strerror.lower() if error.strerror else str(error)
    return None


def check_outputs(args) -> None:
    """Every file the command will write can be written: checked before the work, so that a mistyped folder costs an
    exit 2 now rather than a whole experiment's results at its end. Nothing is truncated, and nothing stays."""
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
        elif (why := why_not_writable(target)) is not None:
            problem = why
        else:
            continue
        raise SpecError(f"--{option}", [("", f"cannot write {path}: {problem}")])
