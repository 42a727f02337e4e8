"""What a finished run must leave behind: nothing. Reads the machine state that the integration tests and the fault
soak compare before and after runs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from controlplane.machine import changes, kernel_links, mounts, vxlan_links


def _v2_subtree_control() -> str | None:
    """The controllers cgroup v2's root enables for its children (a run enables cpu there on a v2 host)."""
    root = mounts.cgroup_v2_mount()
    return None if root is None else (root / "cgroup.subtree_control").read_text().strip()


def snapshot() -> dict:
    """The machine state that Tandem changes during a run and must restore afterwards."""
    return {
        "cgroup_v2_subtree_control": _v2_subtree_control(),
        "sched_rt_runtime_us": changes.RT_RUNTIME.read_text().strip(),
        "sched_rr_timeslice_ms": changes.RR_TIMESLICE.read_text().strip(),
        "nr_hugepages": (changes.HUGEPAGES / "nr_hugepages").read_text().strip(),
        "tracefs_mounted": mounts.tracefs_mounted(),
        # A reservation of NF cores (a service, SCC) takes them out of every task's affinity until the run ends.
        "cpus_of_init_and_this_process": (sorted(os.sched_getaffinity(1)), sorted(os.sched_getaffinity(0))),
    }


def leftovers() -> list[str]:
    """Everything a run could leave behind that it must not: processes, real-time tasks, files, mounts."""
    found = []
    # Threads, not processes: an external NF's forwarding thread is what a scheduler makes real-time.
    threads = subprocess.run(
        ["ps", "-eLo", "pid,tid,cls,stat,comm", "--no-headers"], capture_output=True, text=True
    ).stdout
    for line in threads.splitlines():
        pid, tid, policy, state, name = line.split(None, 4)
        if state.startswith("Z"):  # a zombie runs nothing and holds nothing: its parent has yet to reap it
            continue
        if pid == tid and (name.startswith("tandem-") or name.startswith("dpdk-testpmd")):
            found.append(f"process {name} ({pid})")
        elif policy in ("FF", "RR") and not any(
            k in name for k in ("migration", "watchdog", "rcu", "ksoftirq", "irq/", "idle_inject")
        ):
            found.append(f"real-time thread {name} ({tid} of {pid})")
    if changes.DPDK_RUNTIME.exists():
        found += [f"DPDK runtime {p}" for p in changes.DPDK_RUNTIME.iterdir() if p.name.startswith("tandem")]
    hugepage_files = Path("/dev/hugepages")
    if hugepage_files.is_dir():
        found += [f"hugepage file {p}" for p in hugepage_files.iterdir() if "tandem" in p.name]
    if changes.STATE_DIR.exists():
        found += [f"state {p}" for p in changes.STATE_DIR.iterdir() if p.name != "lock"]
    with open("/proc/mounts") as mount_table:
        found += [f"mount {line.split()[1]}" for line in mount_table if str(changes.STATE_DIR) in line]
    for cgroup_root in (mounts.cgroup_v2_mount(), mounts.cgroup_v1_mount("cpu")):
        if cgroup_root is not None:
            found += [f"cgroup {p}" for p in cgroup_root.iterdir() if p.is_dir() and p.name.startswith("tandem")]
    found += kernel_links.leftovers() + vxlan_links.leftovers()
    return found


def assert_clean(before: dict) -> None:
    assert leftovers() == []
    assert snapshot() == before
