"""Changes Tandem makes to the machine (sysctls, hugepages, hugetlbfs, DPDK runtime files), journaled and undone.

Every change is written to a journal before it is made, and undone in reverse order when the run ends,
whatever the way it ends. A run killed with SIGKILL leaves its journal behind; the next run finds it
(the lock is free but the journal is there), undoes those changes first and says what it cleared.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from controlplane.errors import SetupError
from controlplane.machine import cgroups, task_affinity
from controlplane.machine.mounts import TRACEFS, is_mounted, tracefs_mounted

STATE_DIR = Path(os.environ.get("TANDEM_STATE_DIR", "/run/tandem"))
HUGEPAGES = Path("/sys/kernel/mm/hugepages/hugepages-2048kB")
RT_RUNTIME = Path("/proc/sys/kernel/sched_rt_runtime_us")
RR_TIMESLICE = Path("/proc/sys/kernel/sched_rr_timeslice_ms")
DPDK_RUNTIME = Path("/var/run/dpdk")


def _write_setting(path: Path, value) -> None:
    """Writes a kernel setting's file; SetupError naming the file and value where the kernel refuses."""
    try:
        path.write_text(str(value))
    except OSError as error:
        raise SetupError(f"cannot write {value} to {path}: {error.strerror}") from None


def _read_int(path: Path) -> int:
    return int(path.read_text().split()[0])


def free_hugepage_bytes() -> int:
    """The machine's free memory in 2 MB hugepages, the size Tandem uses (0 where the kernel has none)."""
    return _read_int(HUGEPAGES / "free_hugepages") * 2**21 if HUGEPAGES.exists() else 0


def _undo(change: dict) -> str | None:
    """Undoes one journaled change; returns a description of what was done, or None if nothing was left."""
    kind = change["kind"]
    if kind == "write":
        path = Path(change["path"])
        if path.read_text().strip() == str(change["original"]):
            return None
        path.write_text(str(change["original"]))
        return f"restored {path} to {change['original']}"
    if kind == "hugepages":
        # Given back by what this run added, not put back to what it found: two runs on one machine (a node agent
        # beside another) each add their share, and either may end first, or be killed and cleaned up after.
        path = HUGEPAGES / "nr_hugepages"
        total = _read_int(path)
        back = max(total - change["added"], 0)
        if back == total:  # nothing added, or nothing left to give back
            return None
        path.write_text(str(back))
        return f"gave back {total - back} 2 MB hugepages ({path}: {total} -> {back})"
    if kind == "tracefs":  # a kernel directory: unmounted, never removed
        if not tracefs_mounted():
            return None
        if subprocess.run(["umount", str(TRACEFS)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(TRACEFS)], capture_output=True)
        return f"unmounted tracefs from {TRACEFS}"
    if kind == "mount":
        path = Path(change["path"])
        done = None
        if is_mounted(path):
            if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(path)], capture_output=True)
            done = f"unmounted {path}"
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
        return done
    if kind == "cgroup":
        return cgroups.remove(Path(change["path"]), Path(change["root"]))
    if kind == "subtree_control":  # a cgroup v2 controller enabled for a group's children
        return cgroups.disable(Path(change["group"]), change["controller"])
    if kind == "netns":  # deleting the namespace removes the interfaces in it, and their veth peers
        if not (Path("/run/netns") / change["name"]).exists():
            return None
        subprocess.run(["ip", "netns", "del", change["name"]], capture_output=True)
        return f"removed network namespace {change['name']}"
    if kind == "root_interface":
        if not Path(f"/sys/class/net/{change['name']}").exists():
            return None
        subprocess.run(["ip", "link", "del", change["name"]], capture_output=True)
        return f"removed interface {change['name']}"
    if kind == "process":  # a helper daemon of the run (Open vSwitch), if it is still the same process
        identity = task_affinity.task_identity(change["pid"])
        if identity is None or identity[0] != change["start"]:
            return None
        os.kill(change["pid"], signal.SIGKILL)
        return f"stopped process {change['pid']}"
    if kind == "affinities":
        return task_affinity.give_cores_back(change["tasks"], change.get("since"), change.get("narrowed", []))
    if kind == "socket":  # a service's control socket: removed if it is still a socket (never another file)
        path = Path(change["path"])
        if not path.is_socket():
            return None
        path.unlink()
        return f"removed the control socket {path}"
    if kind == "directory":
        path = Path(change["path"])
        if not path.exists():
            return None
        shutil.rmtree(path, ignore_errors=True)
        return f"removed {path}"
    raise ValueError(f"unknown journal entry {kind}")


def _stray_processes() -> list[tuple[int, str]]:
    """Tandem data-plane processes that no live run owns (their run's control plane died)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # A manager only holds the machine with --run (a --check or --catalog may run beside a run).
        if name == "tandem-worker" or (name == "tandem-manager" and b"--run" in arguments):
            found.append((int(entry.name), name))
    return found


class MachineSession:
    """Holds the machine for one run (one at a time) and undoes every change it makes when it ends."""

    def __init__(self):
        self.notes: list[str] = []  # what was cleared from an earlier run, for the user
        self._lock_file = None
        self._journal: list[dict] = []
        self._saving = threading.Lock()  # a service's control API makes changes (a port's link) on its own threads

    # -- ownership ---------------------------------------------------------------------------------
    def __enter__(self) -> MachineSession:
        if os.geteuid() != 0:
            raise SetupError(
                "tandem runs need root: they reserve hugepages and set real-time scheduling policies (use sudo)"
            )
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self._lock_file = open(STATE_DIR / "lock", "a+")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = self._journal_owner()
            self._lock_file.close()
            raise SetupError(
                f"another tandem run{f' (pid {owner})' if owner else ''} holds the machine; wait for it to end"
            ) from None
        self._clear_stale_state()
        self._save()
        return self

    def __exit__(self, *exc) -> None:
        self.restore()
        if self._lock_file:
            self._lock_file.close()
            self._lock_file = None

    @property
    def _journal_path(self) -> Path:
        return STATE_DIR / "journal.json"

    def _journal_owner(self) -> int | None:
        try:
            return json.loads(self._journal_path.read_text()).get("pid")
        except (OSError, ValueError):
            return None

    def _save(self) -> None:
        with self._saving:
            temporary = self._journal_path.with_suffix(".tmp")
            temporary.write_text(json.dumps({"pid": os.getpid(), "changes": list(self._journal)}))
            os.replace(temporary, self._journal_path)

    def _clear_stale_state(self) -> None:
        for pid, name in _stray_processes():
            try:
                os.kill(pid, signal.SIGKILL)
                self.notes.append(f"killed stray {name} (pid {pid}) left by an earlier run")
            except ProcessLookupError:
                pass
        try:
            stale = json.loads(self._journal_path.read_text())
        except FileNotFoundError:
            return
        except ValueError:
            self.notes.append(f"ignored an unreadable journal {self._journal_path}")
            return
        for change in reversed(stale.get("changes", [])):
            try:
                done = _undo(change)
            except OSError as error:
                done = f"could not undo {change}: {error}"
            if done:
                self.notes.append(f"{done} (left by run pid {stale.get('pid')}, which did not end cleanly)")

    # -- changes -----------------------------------------------------------------------------------
    def write(self, path: Path, value) -> None:
        """Writes a sysctl-like file, journaling its original value first."""
        original = path.read_text().strip()
        if original == str(value):
            return
        self._journal.append({"kind": "write", "path": str(path), "original": original})
        self._save()
        _write_setting(path, value)

    def reserve_hugepages(self, pages: int) -> None:
        """Makes sure `pages` free 2 MB hugepages exist, raising nr_hugepages for the run if needed."""
        if not HUGEPAGES.exists():
            raise SetupError("this kernel has no 2 MB hugepages (/sys/kernel/mm/hugepages/hugepages-2048kB is missing)")
        free = _read_int(HUGEPAGES / "free_hugepages")
        if free >= pages:
            return
        path = HUGEPAGES / "nr_hugepages"
        total = _read_int(path)
        # Journaled as what it adds: restoring the total it found would take another run's pages along (see _undo).
        change = {"kind": "hugepages", "added": pages - free}
        self._journal.append(change)
        self._save()
        try:
            _write_setting(path, total + pages - free)
        finally:
            change["added"] = max(_read_int(path) - total, 0)  # what the kernel could give: all, or less
            self._save()
        got = _read_int(HUGEPAGES / "free_hugepages")
        if got < pages:
            raise SetupError(
                f"could reserve only {got} of the {pages} free 2 MB hugepages this run needs "
                "(memory is fragmented or short: free some, or reserve them at boot with hugepages=N)"
            )

    def mount_hugetlbfs(self, path: Path) -> None:
        self._journal.append({"kind": "mount", "path": str(path)})
        self._save()
        path.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            ["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", str(path)], capture_output=True, text=True
        )
        if result.returncode != 0:
            raise SetupError(f"cannot mount hugetlbfs on {path}: {result.stderr.strip()}")

    def mount_tracefs(self) -> bool:
        """Mounts tracefs at its usual place for the run unless it is there already; False if the kernel refuses."""
        if tracefs_mounted():
            return True
        self._journal.append({"kind": "tracefs"})
        self._save()
        return subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True).returncode == 0

    def reserve_cores(self, cores: set[int]) -> int:
        """Takes `cores` out of the CPU affinity of every task that may run elsewhere (SCC's core reservation, and a
        service's), the original affinities journaled first; kernel threads and tasks allowed only on those cores keep
        theirs. Returns how many tasks it moved."""
        # The run's own helpers (a chain's switch) are the chain's: they keep the cores they were given.
        helpers = {change["pid"] for change in self._journal if change["kind"] == "process"}
        entry = task_affinity.affinities_to_narrow(cores, helpers)
        self._journal.append(entry)
        self._save()
        return task_affinity.narrow(entry, cores)

    def own_process(self, pid: int) -> None:
        """Marks a helper process the run started (it is killed at the end, if it is still that process)."""
        identity = task_affinity.task_identity(pid)
        if identity is not None:
            self._journal.append({"kind": "process", "pid": pid, "start": identity[0]})
            self._save()

    def own_directory(self, path: Path) -> None:
        """Marks a directory that the run creates (e.g. DPDK's runtime files) for removal at the end."""
        self._journal.append({"kind": "directory", "path": str(path)})
        self._save()

    def own_socket(self, path: Path) -> None:
        """Marks the Unix socket a service is about to listen on for removal at the end (only ever as a socket). Its
        folder is made, and removed at the end, if it is not there; a file that is no socket there is refused."""
        if path.exists() and not path.is_socket():
            raise SetupError(f"{path} exists and is not a socket: give the control socket another path (--socket)")
        if not path.parent.exists():
            self.own_directory(path.parent)
            path.parent.mkdir(parents=True)
        self._journal.append({"kind": "socket", "path": str(path)})
        self._save()

    def own_cgroup(self, path: Path, root: Path) -> None:
        """Creates a cgroup for the run; it is emptied (processes back to `root`) and removed at the end."""
        self._journal.append({"kind": "cgroup", "path": str(path), "root": str(root)})
        self._save()
        try:
            cgroups.FILES.make_group(path)
        except OSError as error:
            raise SetupError(f"cannot create the cgroup {path}: {error.strerror}") from None

    def enable_cgroup_controller(self, group: Path, controller: str) -> None:
        """Enables a cgroup v2 controller for `group`'s children (+controller in its cgroup.subtree_control) unless it
        is enabled already; journaled first, and taken back at the end (after the run's groups are gone)."""
        if cgroups.enabled(group, controller):
            return
        self._journal.append({"kind": "subtree_control", "group": str(group), "controller": controller})
        self._save()
        cgroups.enable(group, controller)

    def own_netns(self, name: str) -> None:
        """Creates a network namespace for the run; it is deleted (with its interfaces) at the end."""
        if (Path("/run/netns") / name).exists():
            raise SetupError(
                f"a network namespace {name} exists already and is not this run's (remove it: ip netns del {name})"
            )
        self._journal.append({"kind": "netns", "name": name})
        self._save()
        result = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
        if result.returncode != 0:
            raise SetupError(f"cannot create the network namespace {name}: {result.stderr.strip()}")

    def own_root_interface(self, name: str) -> None:
        """Marks an interface the run is about to create in the root namespace for removal at the end."""
        if Path(f"/sys/class/net/{name}").exists():
            raise SetupError(
                f"an interface {name} exists already and is not this run's (remove it: ip link del {name})"
            )
        self._journal.append({"kind": "root_interface", "name": name})
        self._save()

    def restore(self) -> list[str]:
        """Undoes every change in reverse order; safe to call more than once."""
        undone = []
        while self._journal:
            change = self._journal[-1]
            try:
                done = _undo(change)
                if done:
                    undone.append(done)
            except OSError as error:
                undone.append(f"could not undo {change}: {error}")
            self._journal.pop()
            self._save()
        if self._journal_path.exists():
            self._journal_path.unlink()
        return undone
