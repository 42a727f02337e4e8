"""The cores this machine gives Tandem's processes."""

from __future__ import annotations

import os
from pathlib import Path


def _cpu_list(text: str) -> set[int]:
    """Parses a kernel CPU list such as "0-3,6"."""
    cpus: set[int] = set()
    for part in filter(None, text.strip().split(",")):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def usable_cores() -> set[int]:
    """The cores this machine gives Tandem's processes: its cgroup's cpuset (a container's share), else every online
    core. Not this process's own affinity: an SCC core reservation (of a run killed before it gave the cores back)
    takes the NF cores out of every task's affinity, and a spec must still be checked against the machine."""
    try:
        cgroup = Path("/proc/self/cgroup").read_text().splitlines()
        v2 = next((line.split(":", 2)[2] for line in cgroup if line.startswith("0::")), None)
        if v2 is not None:
            cpuset = Path("/sys/fs/cgroup") / v2.lstrip("/") / "cpuset.cpus.effective"
            if cpuset.exists() and cpuset.read_text().strip():
                return _cpu_list(cpuset.read_text())
        return _cpu_list(Path("/sys/devices/system/cpu/online").read_text())
    except (OSError, ValueError):
        return set(os.sched_getaffinity(0))
