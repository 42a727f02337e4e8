"""The cgroup hierarchy a run uses and the control plane's cgroup changes, on a fake cgroup2 tree laid out as the
kernel's (its file names, formats and errors): the run's group and +cpu in the root's cgroup.subtree_control on v2,
journaled and undone, also after a killed run; v1 left as it was; exit 2 where neither hierarchy offers cpu. The C++
side's fake (schedulers/mechanisms/fake_cgroup2_test_support.h) is checked against the kernel's own tree."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from controlplane.errors import EXIT_BAD_INPUT, SetupError
from controlplane.machine import cgroups, changes, mounts, resources

KNOWN = ["cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"]  # the kernel's order


class FakeCgroup2:
    """A cgroup2 tree in a directory: a new group gets the core files and its parent's enabled controllers' files;
    cgroup.subtree_control takes +/-names (ENOENT: not offered; EINVAL: unknown; EBUSY: processes in a non-root
    group, or a child still enables it); cgroup.procs moves a process (EBUSY below controllers); rmdir refuses a
    group with a process or a child (EBUSY)."""

    def __init__(self, root: Path, offered: str = "cpuset cpu io memory hugetlb pids"):
        self.root = root
        root.mkdir()
        (root / "cgroup.controllers").write_text(offered + "\n")
        for name in ("cgroup.subtree_control", "cgroup.procs", "cgroup.threads"):
            (root / name).write_text("")
        self.refuse: dict[str, int] = {}  # file name: the errno its next write gets

    @staticmethod
    def _listed(names: list[str]) -> str:
        return " ".join(n for n in KNOWN if n in names) + ("\n" if names else "")

    def _offer(self, group: Path, controllers: list[str]) -> None:
        (group / "cgroup.controllers").write_text(self._listed(controllers))
        for controller, name, initial in (("cpu", "cpu.weight", "100\n"), ("cpu", "cpu.max", "max 100000\n")):
            if controller in controllers and not (group / name).exists():
                (group / name).write_text(initial)
            elif controller not in controllers and (group / name).exists():
                (group / name).unlink()

    def read(self, path: Path) -> str:
        return path.read_text()

    def make_group(self, path: Path) -> None:
        path.mkdir()  # FileExistsError / FileNotFoundError as the kernel's EEXIST / ENOENT
        if not (path.parent / "cgroup.subtree_control").exists():  # a v1 cpu hierarchy's group
            for name, text in (("cgroup.procs", ""), ("tasks", ""), ("cpu.shares", "1024\n")):
                (path / name).write_text(text)
            return
        for name, text in (("cgroup.procs", ""), ("cgroup.threads", ""), ("cgroup.type", "domain\n"),
                           ("cgroup.subtree_control", ""), ("cgroup.freeze", "0\n"),
                           ("cgroup.events", "populated 0\nfrozen 0\n")):  # fmt: skip
            (path / name).write_text(text)
        self._offer(path, (path.parent / "cgroup.subtree_control").read_text().split())

    def remove_group(self, path: Path) -> None:
        if any(p.is_dir() for p in path.iterdir()) or (path / "cgroup.procs").read_text().strip():
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
        for file in path.iterdir():
            file.unlink()
        path.rmdir()

    def write(self, path: Path, text: str) -> None:
        if not path.is_file():
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
        if path.name in self.refuse:
            code = self.refuse.pop(path.name)
            raise OSError(code, os.strerror(code))
        group, value = path.parent, text.strip()
        if path.name == "cgroup.subtree_control":
            enabled = (group / "cgroup.subtree_control").read_text().split()
            for token in value.split():
                name = token[1:]
                if token[0] not in "+-" or name not in KNOWN:
                    raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
                if token[0] == "+" and name not in (group / "cgroup.controllers").read_text().split():
                    raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
                if token[0] == "+" and group != self.root and (group / "cgroup.procs").read_text().strip():
                    raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
                children = [p for p in group.iterdir() if p.is_dir()]
                if token[0] == "-" and any(
                    name in (c / "cgroup.subtree_control").read_text().split() for c in children
                ):
                    raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
                enabled = enabled + [name] if token[0] == "+" else [n for n in enabled if n != name]
            (group / "cgroup.subtree_control").write_text(self._listed(enabled))
            for child in (p for p in group.iterdir() if p.is_dir()):
                self._offer(child, enabled)
        elif path.name == "cgroup.procs":
            if group != self.root and (group / "cgroup.subtree_control").read_text().strip():
                raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
            for procs in [self.root / "cgroup.procs", *self.root.rglob("cgroup.procs")]:
                procs.write_text("".join(f"{p}\n" for p in procs.read_text().split() if p != value))
            path.write_text(path.read_text() + value + "\n")
        else:
            path.write_text(value + "\n")


@pytest.fixture
def fake(tmp_path, monkeypatch) -> FakeCgroup2:
    """A v2-only host's tree, as the files every cgroup call of the control plane goes to; a machine session that
    journals to the test's directory and takes the test for root."""
    tree = FakeCgroup2(tmp_path / "cgroup")
    monkeypatch.setattr(cgroups, "FILES", tree)
    monkeypatch.setattr(changes, "STATE_DIR", tmp_path / "state")
    monkeypatch.setattr(changes.os, "geteuid", lambda: 0)
    monkeypatch.setattr(changes, "_stray_processes", lambda: [])  # a real run's processes are none of the test's
    return tree


def v2_needs(fake: FakeCgroup2) -> dict:
    """The requirement the data plane gives on a v2-only host."""
    return {"cpu_cgroup_dir": {"hierarchy": "v2", "root": str(fake.root)}}


def mounts_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mounts"
    path.write_text(text)
    return path


def test_cpu_is_used_through_v1_where_the_host_binds_it_there_else_v2_where_the_root_offers_it(tmp_path):
    v2 = tmp_path / "unified"
    v2.mkdir()
    (v2 / "cgroup.controllers").write_text("hugetlb\n")  # this VM: a hybrid host
    hybrid = mounts_file(
        tmp_path, f"cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu,cpuacct 0 0\ncgroup2 {v2} cgroup2 rw 0 0\n"
    )
    assert mounts.cgroup_hierarchy("cpu", hybrid) == mounts.CgroupHierarchy("v1", Path("/sys/fs/cgroup/cpu"))
    assert mounts.cgroup_hierarchy("hugetlb", hybrid) == mounts.CgroupHierarchy("v2", v2)
    assert mounts.cgroup_hierarchy("cpuset", hybrid) is None
    assert f"cgroup v2 at {v2} offers only 'hugetlb'" in mounts.cgroup_hierarchy_missing("cpuset", hybrid)
    (v2 / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")  # Debian 12, RHEL 9, Kubernetes nodes
    unified = mounts_file(tmp_path, f"cgroup2 {v2} cgroup2 rw,nsdelegate 0 0\n")
    assert mounts.cgroup_hierarchy("cpu", unified) == mounts.CgroupHierarchy("v2", v2)
    assert "cgroup v2 is not mounted" in mounts.cgroup_hierarchy_missing("cpu", mounts_file(tmp_path, ""))


def test_the_data_plane_names_the_hierarchy_this_machine_offers_cpu_in(tmp_path):
    from controlplane.spec import catalog
    from controlplane.spec.deployment import run_config
    from controlplane.spec.loading import load_spec

    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nscheduler: nfvnice\nchains:\n  - name: c\n    nfs: [{name: a, type: macswap, core: 1}]\n")
    verdict = catalog.check(run_config(load_spec(spec)), str(spec))
    hierarchy = mounts.cgroup_hierarchy("cpu")
    if hierarchy is None:  # the spec is refused, exit 2, saying what each hierarchy lacks
        assert "no cgroup v1 hierarchy binds it" in json.dumps(verdict)
        return
    assert verdict["requirements"]["cpu_cgroup_dir"] == {"hierarchy": hierarchy.version, "root": str(hierarchy.root)}


def test_v2_enables_cpu_in_the_root_for_the_run_and_takes_it_back(fake):
    run = resources.RunPlace("tandem1", {}, [])
    with changes.MachineSession() as session:
        resources.provide(session, v2_needs(fake), run)
        assert run.paths["cpu_cgroup_dir"] == str(fake.root / "tandem1")
        assert (fake.root / "cgroup.subtree_control").read_text() == "cpu\n"
        assert (fake.root / "tandem1" / "cgroup.controllers").read_text() == "cpu\n"
        journal = json.loads((changes.STATE_DIR / "journal.json").read_text())["changes"]
        assert [c["kind"] for c in journal] == ["subtree_control", "cgroup"]
        # What the data plane then does (cpu_cgroups.cc): +cpu for the NFs' groups, one NF's group with its process.
        fake.write(fake.root / "tandem1" / "cgroup.subtree_control", "+cpu")
        fake.make_group(fake.root / "tandem1" / "nf")
        fake.write(fake.root / "tandem1" / "nf" / "cgroup.procs", str(os.getpid()))
    assert not (fake.root / "tandem1").exists()
    assert (fake.root / "cgroup.subtree_control").read_text() == ""
    assert (fake.root / "cgroup.procs").read_text() == f"{os.getpid()}\n"


def test_cpu_the_root_enabled_before_the_run_stays(fake):
    fake.write(fake.root / "cgroup.subtree_control", "+cpu +memory")
    with changes.MachineSession() as session:
        resources.provide(session, v2_needs(fake), resources.RunPlace("t", {}, []))
    assert (fake.root / "cgroup.subtree_control").read_text() == "cpu memory\n"


def test_the_next_session_undoes_a_killed_runs_group_and_cpu(fake):
    session = changes.MachineSession().__enter__()
    resources.provide(session, v2_needs(fake), resources.RunPlace("t", {}, []))
    session._lock_file.close()  # a SIGKILLed run: its lock goes with it, its journal stays
    assert (fake.root / "t").exists() and (fake.root / "cgroup.subtree_control").read_text() == "cpu\n"
    with changes.MachineSession() as session:
        assert not (fake.root / "t").exists()
        assert (fake.root / "cgroup.subtree_control").read_text() == ""
        assert any("disabled the cgroup v2 cpu controller" in note for note in session.notes), session.notes


def test_v1_is_left_as_it_is(fake, tmp_path):
    v1 = tmp_path / "cpu"
    v1.mkdir()
    run = resources.RunPlace("t", {}, [])
    with changes.MachineSession() as session:
        resources.provide(session, {"cpu_cgroup_dir": {"hierarchy": "v1", "root": str(v1)}}, run)
        assert run.paths["cpu_cgroup_dir"] == str(v1 / "t")
    assert (fake.root / "cgroup.subtree_control").read_text() == ""


def test_neither_hierarchy_is_exit_2_saying_which_lacks_what(fake):
    why = "the 'cpu' controller is in no cgroup hierarchy: ..., and cgroup v2 at x offers only 'hugetlb'"
    with changes.MachineSession() as session:
        with pytest.raises(SetupError, match="offers only 'hugetlb'") as refused:
            resources.provide(
                session, {"cpu_cgroup_dir": {"hierarchy": "none", "why": why}}, resources.RunPlace("t", {}, [])
            )
        assert refused.value.exit_status == EXIT_BAD_INPUT
        assert session._journal == []


def test_a_refused_enable_says_what_the_kernel_means_and_leaves_nothing(fake):
    fake.refuse["cgroup.subtree_control"] = errno.EINVAL
    with changes.MachineSession() as session:
        with pytest.raises(SetupError, match="CONFIG_RT_GROUP_SCHED"):
            resources.provide(session, v2_needs(fake), resources.RunPlace("t", {}, []))
    assert not (fake.root / "t").exists()
    assert (fake.root / "cgroup.subtree_control").read_text() == ""
    fake.make_group(fake.root / "g")  # the root enables nothing for its children: g is offered nothing
    with pytest.raises(SetupError, match=r"\(\+cpu in .*/g/cgroup.subtree_control\): No such file or directory \(the"):
        cgroups.enable(fake.root / "g", "cpu")
