"""This machine in one line (vCPUs, host or VM, CPU model, kernel), as results and caches name it."""

from __future__ import annotations

import os
import platform


def machine_description() -> str:
    model = "unknown CPU"
    virtual = False
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name") and model == "unknown CPU":
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags") and " hypervisor" in line:
                    virtual = True
    except OSError:
        pass
    kind = "VM" if virtual else "host"
    return f"{os.cpu_count()} vCPU {kind}, {model}, Linux {platform.release()}"
