"""What every thread of a stalled run was doing, read from /proc (and from gdb, where it is installed) before the run
is killed: a hang becomes a report that names the thread that spins, the one that waits, and where."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from controlplane.machine.changes import STATE_DIR

PROC = Path("/proc")
# Linux's scheduling policy numbers (sched.h), as /proc/PID/stat field 41 gives them.
POLICIES = {0: "other", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}
CPU_SAMPLE_SECONDS = 0.2
GDB_SECONDS = 20


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def run_processes(manager_pid: int) -> list[int]:
    """The manager and every process below it (workers, external applications), parents first."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        stat = _read(entry / "stat")
        if ")" not in stat:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [manager_pid]
    while pending:
        pid = pending.pop(0)
        found.append(pid)
        pending.extend(sorted(children.get(pid, [])))
    return found


def _stat_fields(task: Path) -> list[str] | None:
    """Fields 3 onwards of /proc/.../stat (state first): the command name may hold spaces, so split after it."""
    stat = _read(task / "stat")
    return stat.rsplit(")", 1)[1].split() if ")" in stat else None


def _cpu_ticks(fields: list[str]) -> int:
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)


def _main_first(pid: int):
    return lambda task: (int(task.name) != pid, int(task.name))


def thread_table(pids: list[int]) -> list[str]:
    """One line per thread: state, policy and real-time priority, allowed and last CPUs, share of a CPU it used
    over a short sample, and where in the kernel it waits (wchan, and the top of its kernel stack as root)."""
    # The main thread (tid == pid) first, then the others by tid: tids wrap around, so a thread started late may
    # have a smaller tid than the process's own.
    tasks = [(pid, task) for pid in pids for task in sorted((PROC / str(pid) / "task").glob("*"), key=_main_first(pid))]
    before = {task: _stat_fields(task) for _, task in tasks}
    time.sleep(CPU_SAMPLE_SECONDS)
    ticks_per_second = 100  # USER_HZ: what /proc counts utime and stime in on Linux
    lines = []
    for pid, task in tasks:
        fields = _stat_fields(task)
        if fields is None:
            lines.append(f"pid {pid} tid {task.name}: gone")
            continue
        status = _read(task / "status")
        allowed = next((line.split()[1] for line in status.splitlines() if line.startswith("Cpus_allowed_list:")), "?")
        first = before.get(task)
        used = (_cpu_ticks(fields) - _cpu_ticks(first)) / ticks_per_second / CPU_SAMPLE_SECONDS if first else None
        policy = POLICIES.get(int(fields[38]), fields[38])
        priority = f" {fields[37]}" if policy in ("fifo", "rr") else ""
        stack = [line.split()[-1] for line in _read(task / "stack").splitlines()[:3] if line.strip()]
        lines.append(
            f"pid {pid} tid {task.name} {_read(task / 'comm').strip():<16} state {fields[0]} {policy}{priority:<4} "
            f"cpus {allowed:<5} on cpu {fields[36]:<3} {'?' if used is None else f'{used:4.0%}'} of a cpu  "
            f"wchan {_read(task / 'wchan').strip() or '-'}" + (f"  kernel stack {' < '.join(stack)}" if stack else "")
        )
    return lines


def kernel_stack(pid: int) -> str:
    """The top of a process's kernel stack, innermost first (root only; "an unknown place" otherwise)."""
    frames = [line.split()[-1] for line in _read(PROC / str(pid) / "stack").splitlines()[:4] if line.strip()]
    return " < ".join(frames) or "an unknown place"


def user_stacks(pid: int) -> str:
    """Every thread's user-space stack, from gdb (which stops the process while it reads it)."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "(gdb is not installed: no user-space stacks)"
    try:
        result = subprocess.run(
            [gdb, "-batch", "-nx", "-p", str(pid), "-ex", "thread apply all bt 15"],
            capture_output=True,
            text=True,
            timeout=GDB_SECONDS,
        )
    except subprocess.TimeoutExpired:
        return f"(gdb did not read the stacks within {GDB_SECONDS} s)"
    frames = [line for line in result.stdout.splitlines() if line.startswith(("Thread ", "#"))]
    return "\n".join(frames) if frames else f"(gdb read no stacks: {result.stderr.strip()[-300:]})"


def diagnose(manager_pid: int) -> str:
    """The whole report: every thread of the run, then the manager's stacks."""
    pids = run_processes(manager_pid)
    return "\n".join(
        [
            "threads of the run:",
            *("  " + line for line in thread_table(pids)),
            f"the manager's stacks (pid {manager_pid}):",
            *("  " + line for line in user_stacks(manager_pid).splitlines()),
        ]
    )


def real_time_threads() -> list[str]:
    """Every real-time thread on the machine outside the kernel's own (which run nothing of a run's), one line each:
    a thread that spins there takes its CPU from everything below its priority, whoever started it."""
    lines = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        for task in (entry / "task").glob("*"):
            fields = _stat_fields(task)
            if fields is None or POLICIES.get(int(fields[38])) not in ("fifo", "rr"):
                continue
            if not _read(entry / "cmdline"):  # a kernel thread (migration, watchdog ...)
                continue
            lines.append(
                f"pid {entry.name} tid {task.name} {_read(task / 'comm').strip():<16} state {fields[0]} "
                f"{POLICIES[int(fields[38])]} {fields[37]} on cpu {fields[36]}"
            )
    return lines


def hang_report(pid: int) -> str:
    """What a command that outlived its allowance was doing: every thread of it and of the processes below it,
    every real-time thread on the machine, the manager's stacks and the tail of its log."""
    pids = run_processes(pid)
    managers = [child for child in pids if _read(PROC / str(child) / "comm").strip() == "tandem-manager"]
    parts = ["threads of the command and its children:", *("  " + line for line in thread_table(pids))]
    parts += ["real-time threads on the machine:", *("  " + line for line in real_time_threads() or ["none"])]
    for manager in managers:
        parts += [
            f"the manager's stacks (pid {manager}):",
            *("  " + line for line in user_stacks(manager).splitlines()),
        ]
    for log in sorted(STATE_DIR.glob("run-*/manager.log")):
        parts += [f"the last lines of {log}:", *("  " + line for line in _read(log).splitlines()[-20:])]
    return "\n".join(parts)
