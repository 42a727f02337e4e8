"""Which cores a task may run on: a reservation takes cores out of every other task's affinity and gives them back,
to the tasks it narrowed and to those born meanwhile that inherited a narrowed one."""

from __future__ import annotations

import os
from pathlib import Path

KERNEL_THREAD = 0x00200000  # PF_KTHREAD in /proc/PID/stat's flags


def task_identity(tid: int) -> tuple[int, int] | None:
    """A task's start time and flags (/proc/TID/stat); None once it is gone. The start time tells a task from a
    later one that got its id."""
    try:
        fields = Path(f"/proc/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[19]), int(fields[6])  # starttime (field 22), flags (field 9)


def _boot_ticks_now() -> int:
    """Now, in the clock ticks since boot that /proc/TID/stat gives a task's start time in."""
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return int(uptime * os.sysconf("SC_CLK_TCK"))


def _thread_group(tid: int) -> int | None:
    """The process a thread belongs to (Tgid in /proc/TID/status)."""
    try:
        for line in Path(f"/proc/{tid}/status").read_text().splitlines():
            if line.startswith("Tgid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _every_task() -> list[int]:
    tids = []
    for process in Path("/proc").iterdir():
        if process.name.isdigit():
            try:
                tids += [int(task.name) for task in (process / "task").iterdir()]
            except OSError:
                pass  # gone meanwhile
    return tids


def affinities_to_narrow(cores: set[int], keep: set[int]) -> dict:
    """The journal entry of a reservation of `cores`: every task that may also run elsewhere, with its affinity now
    (kernel threads, tasks allowed only on those cores and the processes in `keep` keep theirs), the time it is
    made, and each narrowed affinity with what it was narrowed from."""
    tasks = []
    for tid in _every_task():
        if _thread_group(tid) in keep:
            continue
        identity = task_identity(tid)
        try:
            allowed = os.sched_getaffinity(tid)
        except OSError:
            continue
        if identity is None or identity[1] & KERNEL_THREAD or not allowed & cores or not allowed - cores:
            continue
        tasks.append({"tid": tid, "start": identity[0], "cpus": sorted(allowed)})
    narrowed = {(tuple(sorted(set(task["cpus"]) - cores)), tuple(task["cpus"])) for task in tasks}
    return {"kind": "affinities", "tasks": tasks, "since": _boot_ticks_now(), "narrowed": sorted(narrowed)}


def narrow(entry: dict, cores: set[int]) -> int:
    """Takes `cores` out of the affinity of the tasks of `entry` (affinities_to_narrow's); how many it moved."""
    moved = 0
    for task in entry["tasks"]:
        try:
            os.sched_setaffinity(task["tid"], set(task["cpus"]) - cores)
            moved += 1
        except OSError:
            pass  # exited meanwhile, or a task whose affinity cannot change
    return moved


def give_cores_back(tasks: list[dict], since: int | None = None, narrowed: list = ()) -> str | None:
    """Gives every task that is still the same task its CPU affinity from before the reservation; and a task born
    since (`since`, in boot clock ticks) with one of the narrowed affinities, which it inherited from a parent the
    reservation narrowed, the reserved cores too: without them, a shell or a service started while the cores were
    reserved would stay off them for good."""
    restored = 0
    for task in tasks:
        identity = task_identity(task["tid"])
        if identity is None or identity[0] != task["start"]:
            continue
        try:
            if os.sched_getaffinity(task["tid"]) != set(task["cpus"]):
                os.sched_setaffinity(task["tid"], task["cpus"])
                restored += 1
        except OSError:
            pass  # exited meanwhile
    # Each narrowed affinity back to what it was narrowed from (the widest, where tasks of several had it).
    originals: dict[frozenset[int], set[int]] = {}
    for narrowed_cpus, cpus in narrowed:
        originals.setdefault(frozenset(narrowed_cpus), set()).update(cpus)
    for tid in _every_task() if since is not None and originals else ():
        identity = task_identity(tid)
        if identity is None or identity[0] < since or identity[1] & KERNEL_THREAD:
            continue
        try:
            original = originals.get(frozenset(os.sched_getaffinity(tid)))
            if original is not None:
                os.sched_setaffinity(tid, original)
                restored += 1
        except OSError:
            pass  # exited meanwhile
    return f"gave the reserved cores back to {restored} tasks" if restored else None
