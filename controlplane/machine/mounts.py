"""Where the kernel's file systems are mounted on this machine: tracefs, and the cgroup v1 and v2 hierarchies (and
which of them a controller is used through)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")  # where perf finds tracepoints (the system-call counter of run --profile)
MOUNTS = Path("/proc/self/mounts")


def is_mounted(path: Path) -> bool:
    target = str(path.resolve())
    with open("/proc/mounts") as mounts:
        return any(line.split()[1] == target for line in mounts)


def tracefs_mounted() -> bool:
    with open("/proc/mounts") as mounts:
        return any(line.split()[1] == str(TRACEFS) and line.split()[2] == "tracefs" for line in mounts)


def _find_mount(matches, mounts_file: Path = MOUNTS) -> Path | None:
    """The first mount point whose file-system type and options `matches(type, options)` accepts."""
    with open(mounts_file) as mounts:
        for line in mounts:
            fields = line.split()
            if matches(fields[2], fields[3].split(",")):
                return Path(fields[1])
    return None


def cgroup_v2_mount(mounts_file: Path = MOUNTS) -> Path | None:
    return _find_mount(lambda fs_type, options: fs_type == "cgroup2", mounts_file)


def cgroup_v1_mount(controller: str, mounts_file: Path = MOUNTS) -> Path | None:
    """Where the cgroup v1 hierarchy that has `controller` (e.g. cpu) is mounted, if it is."""
    return _find_mount(lambda fs_type, options: fs_type == "cgroup" and controller in options, mounts_file)


@dataclass(frozen=True)
class CgroupHierarchy:
    version: str  # "v1" or "v2"
    root: Path  # where it is mounted: the root group


def _offered(root: Path) -> list[str]:
    """The controllers a cgroup v2 group may enable for its children: its cgroup.controllers."""
    try:
        return (root / "cgroup.controllers").read_text().split()
    except OSError:
        return []


def cgroup_hierarchy(controller: str, mounts_file: Path = MOUNTS) -> CgroupHierarchy | None:
    """The hierarchy a run uses `controller` through: the v1 hierarchy that binds it where the host has one (a
    controller is bound to one hierarchy at a time), else cgroup v2 where its root's cgroup.controllers lists it;
    None where neither. The data plane's rule too (schedulers/mechanisms/cgroup_fs.h), which names the hierarchy in
    the run's requirements."""
    v1 = cgroup_v1_mount(controller, mounts_file)
    if v1 is not None:
        return CgroupHierarchy("v1", v1)
    v2 = cgroup_v2_mount(mounts_file)
    if v2 is not None and controller in _offered(v2):
        return CgroupHierarchy("v2", v2)
    return None


def cgroup_hierarchy_missing(controller: str, mounts_file: Path = MOUNTS) -> str:
    """Which hierarchy lacks `controller`, and what each one lacks (a test's skip reason, an error message)."""
    v2 = cgroup_v2_mount(mounts_file)
    where = "cgroup v2 is not mounted" if v2 is None else f"cgroup v2 at {v2} offers only '{' '.join(_offered(v2))}'"
    return f"the '{controller}' controller is in no cgroup hierarchy: no cgroup v1 hierarchy binds it, and {where}"
