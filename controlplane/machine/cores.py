"""The cores this machine gives Tandem's processes."""

from __future__ import annotations

import os
from pathlib import Path

from controlplane.machine import mounts


def _cpu_list(text: str) -> set[int]:
    """Parses a kernel CPU list such as "0-3,6"."""
    cpus: set[int] = set()
    for part in filter(None, text.strip().split(",")):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def _own_cpuset() -> Path | None:
    """This process's cpuset file in the hierarchy that has cpuset: v1's cpuset.effective_cpus, or v2's
    cpuset.cpus.effective (the group's path from /proc/self/cgroup: "N:cpuset:/path" on v1, "0::/path" on v2)."""
    hierarchy = mounts.cgroup_hierarchy("cpuset")
    if hierarchy is None:
        return None
    v1 = hierarchy.version == "v1"
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if ("cpuset" in controllers.split(",")) if v1 else number == "0":
            return hierarchy.root / path.lstrip("/") / ("cpuset.effective_cpus" if v1 else "cpuset.cpus.effective")
    return None


def usable_cores() -> set[int]:
    """The cores this machine gives Tandem's processes: its cgroup's cpuset (a container's share), else every online
    core. Not this process's own affinity: an SCC core reservation (of a run killed before it gave the cores back)
    takes the NF cores out of every task's affinity, and a spec must still be checked against the machine."""
    try:
        cpuset = _own_cpuset()
        if cpuset is not None and cpuset.exists() and cpuset.read_text().strip():
            return _cpu_list(cpuset.read_text())
        return _cpu_list(Path("/sys/devices/system/cpu/online").read_text())
    except (OSError, ValueError):
        return set(os.sched_getaffinity(0))
