"""A run's system-call counter (perf's raw_syscalls:sys_enter tracepoint) for tests that count with it: counted, or
the test skipped saying why this machine cannot count, never passed on an "unsupported"."""

from __future__ import annotations

import functools
import subprocess

import pytest

TRACEPOINT = "/sys/kernel/tracing/events/raw_syscalls/sys_enter/id"


@functools.cache
def why_uncountable() -> str | None:
    """Why this machine cannot count system calls, or None where it can. Asked in a mount namespace of its own, so
    nothing on the machine changes: a run mounts tracefs where it is not, so only a kernel without tracefs or without
    the tracepoint leaves the counter unsupported."""
    probe = subprocess.run(
        ["unshare", "--mount", "sh", "-c", f"mount -t tracefs nodev /sys/kernel/tracing 2>&1; test -e {TRACEPOINT}"],
        capture_output=True,
        text=True,
    )
    if probe.returncode == 0:
        return None
    return f"this kernel has no {TRACEPOINT} ({probe.stdout.strip() or 'the tracepoint is missing'})"


def syscalls_of(worker: dict) -> dict:
    """The worker's system-call counter from a run's perf_counters report; skips the test where the machine cannot
    count them, and fails where it can but the run did not."""
    if "syscalls" in worker["counters"]:
        return worker["counters"]["syscalls"]
    reason = why_uncountable()
    if reason is None:
        pytest.fail(f"this machine counts system calls, the run did not: {worker['unsupported'].get('syscalls')}")
    pytest.skip(reason)
