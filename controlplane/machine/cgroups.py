"""The cgroup changes a run makes, and their undoing: a group of the run's (removed with everything in it) and a
cgroup v2 controller enabled for a group's children (taken back). The calls go through FILES, so that tests replay
the kernel's cgroup2 answers on a plain directory."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from controlplane.errors import SetupError


class KernelFiles:
    """The kernel's cgroup files; each call raises OSError with the kernel's errno."""

    def read(self, path: Path) -> str:
        return path.read_text()

    def write(self, path: Path, text: str) -> None:
        path.write_text(text)

    def make_group(self, path: Path) -> None:
        path.mkdir()

    def remove_group(self, path: Path) -> None:
        path.rmdir()


FILES = KernelFiles()

# What the kernel means by an error on cgroup.subtree_control (Documentation/admin-guide/cgroup-v2.rst).
_SUBTREE_ERRORS = {
    errno.ENOENT: "the controller is not in the group's cgroup.controllers: its parent does not enable it",
    errno.EBUSY: "the group holds processes (only the root may, beside controllers for its children)",
    errno.EINVAL: "an unknown controller, or (cpu) a real-time task outside the root group while the kernel groups "
    "real-time tasks (CONFIG_RT_GROUP_SCHED)",
}


def enabled(group: Path, controller: str) -> bool:
    """Whether `group` enables `controller` for its children (its cgroup.subtree_control lists it)."""
    try:
        return controller in FILES.read(group / "cgroup.subtree_control").split()
    except OSError:
        return False


def enable(group: Path, controller: str) -> None:
    """Writes +controller to `group`'s cgroup.subtree_control; a refusal is a SetupError saying what it means."""
    control = group / "cgroup.subtree_control"
    try:
        FILES.write(control, f"+{controller}")
    except OSError as error:
        meaning = _SUBTREE_ERRORS.get(error.errno)
        raise SetupError(
            f"cannot enable the cgroup v2 '{controller}' controller for the run (+{controller} in {control}): "
            f"{os.strerror(error.errno or 0)}{f' ({meaning})' if meaning else ''}"
        ) from None


def disable(group: Path, controller: str) -> str | None:
    """Takes `controller` back from `group`'s children (-controller); what was done, or None if nothing was left."""
    if not enabled(group, controller):
        return None
    FILES.write(group / "cgroup.subtree_control", f"-{controller}")
    return f"disabled the cgroup v2 {controller} controller in {group / 'cgroup.subtree_control'}"


def remove(path: Path, root: Path) -> str | None:
    """Thaws a cgroup tree, moves its processes back to the hierarchy's root and removes it, deepest first."""
    if not path.exists():
        return None
    groups = sorted((p for p in path.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True) + [path]
    for group in groups:
        if (group / "cgroup.freeze").exists():
            FILES.write(group / "cgroup.freeze", "0")
        procs = group / "cgroup.procs"
        for pid in FILES.read(procs).split() if procs.exists() else []:
            try:
                FILES.write(root / "cgroup.procs", pid)
            except OSError:
                pass  # exited meanwhile
        FILES.remove_group(group)
    return f"removed cgroup {path}"
