"""Where the kernel's file systems are mounted on this machine: tracefs, and the cgroup v1 and v2 hierarchies."""

from __future__ import annotations

from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")  # where perf finds tracepoints (the system-call counter of run --profile)


def is_mounted(path: Path) -> bool:
    target = str(path.resolve())
    with open("/proc/mounts") as mounts:
        return any(line.split()[1] == target for line in mounts)


def tracefs_mounted() -> bool:
    with open("/proc/mounts") as mounts:
        return any(line.split()[1] == str(TRACEFS) and line.split()[2] == "tracefs" for line in mounts)


def _find_mount(matches) -> Path | None:
    """The first mount point whose file-system type and options `matches(type, options)` accepts."""
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            if matches(fields[2], fields[3].split(",")):
                return Path(fields[1])
    return None


def cgroup_v2_mount() -> Path | None:
    return _find_mount(lambda fs_type, options: fs_type == "cgroup2")


def cgroup_v1_mount(controller: str) -> Path | None:
    """Where the cgroup v1 hierarchy that has `controller` (e.g. cpu) is mounted, if it is."""
    return _find_mount(lambda fs_type, options: fs_type == "cgroup" and controller in options)
