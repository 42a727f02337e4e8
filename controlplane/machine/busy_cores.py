"""How many of the machine's cores were busy over a stretch of time, from /proc/stat: what a lab's traffic cost the
whole machine (clients, servers, the kernel's forwarding or Tandem's pollers alike), so that both ways of carrying
it are measured the same way."""

from __future__ import annotations

import os
import time
from pathlib import Path


def _busy_and_total() -> tuple[int, int]:
    """Jiffies since boot over every core: busy (all but idle and iowait) and in all."""
    fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest time is inside user)
    return total - idle, total


class BusyCores:
    """Started when constructed; `cores()` is the average number of busy cores since then."""

    def __init__(self):
        self._busy, self._total = _busy_and_total()
        self._started = time.monotonic()

    def cores(self) -> float:
        busy, total = _busy_and_total()
        if total == self._total:
            return 0.0
        return (busy - self._busy) / (total - self._total) * (os.cpu_count() or 1)

    def seconds(self) -> float:
        return time.monotonic() - self._started
