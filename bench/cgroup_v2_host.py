"""The cgroup tests on a host that mounts cgroup v2 only (as Debian 12, Ubuntu 22.04+, RHEL 9 and Kubernetes nodes
do), where our machines bind cpu to v1: a Debian kernel booted in QEMU with cgroup_no_v1=all, over this machine's own
files (read-only 9p, a tmpfs overlay for what the tests write), runs the C++ cgroup tests and every integration test
of NFVnice and the freezer, and the outcome of each test is saved.

Usage (as root): .venv/bin/python bench/cgroup_v2_host.py [--select EXPR] [--minutes 50]
Writes bench/results/cgroup-v2-host.{json.gz,md}. Installs qemu-system-x86, busybox-static and cpio from Debian's
packages where missing, downloads the kernel Debian's linux-image-amd64 names, and builds Tandem once more for the
virtual CPU (QEMU's emulated CPU has no AVX-512, which -march=native may use here) under the cache folder below.
The VM runs on QEMU's emulator (TCG) where this host's /dev/kvm cannot start a stock kernel: slow, but the tests
derive their thresholds from what they measure. The VM is killed when its time is up or this script stops.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench.experiment_support import save_result  # noqa: E402
from controlplane.machine.child_death import die_with_the_control_plane  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

CACHE = Path("/var/cache/tandem/cgroup-v2-vm")
# The tests whose paths differ between the hierarchies: NFVnice's cpu groups, the freezer's cgroup.freeze, and the
# cgroup file protocol of the C++ mechanisms.
SELECT = "nfvnice or freezer or cgroup or auto_switches_live_when_the_load_rises"  # the last starts on nfvnice
PYTEST_FILES = [
    "tests/integration/test_nfvnice.py",
    "tests/integration/test_unis.py",
    "tests/integration/test_graph.py",
    "tests/integration/test_faults.py",
    "tests/integration/test_restarts.py",
    "tests/integration/test_service.py",
    "tests/integration/test_auto.py",
    "tests/integration/test_long_line.py",
    "tests/controlplane/test_cgroups.py",
    "tests/controlplane/test_machine_resources.py",
]
MESON_TESTS = [
    "cpu_cgroups",
    "nfvnice",
    "cgroup_files",
    "process_controller",
]  # the suites of the cgroup files' C++ tests
# What the initramfs needs to reach the host's files over 9p and stack a tmpfs on them; with what they depend on.
MODULES = ["virtio_pci", "9pnet_virtio", "9p", "overlay"]
INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in {modules}; do insmod /mods/$m; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose hostroot /ro
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 out /out
mount -t tmpfs -o size=4g tmpfs /rw; mkdir -p /rw/u /rw/w
mount -t overlay overlay -o lowerdir=/ro,upperdir=/rw/u,workdir=/rw/w /newroot
mkdir -p /newroot/vmout; mount --bind /out /newroot/vmout
mount -t proc proc /newroot/proc; mount -t sysfs sys /newroot/sys; mount -t devtmpfs dev /newroot/dev
exec chroot /newroot /bin/bash /vmout/job.sh
"""


def sh(*command: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, check=True, **kwargs)


def tools() -> None:
    needed = {"qemu-system-x86": "qemu-system-x86_64", "busybox-static": "busybox", "cpio": "cpio"}
    missing = [package for package, program in needed.items() if shutil.which(program) is None]
    if missing:
        print(f"installing {', '.join(missing)}", file=sys.stderr, flush=True)
        environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        sh("apt-get", "install", "-y", "--no-install-recommends", *missing, stdout=subprocess.DEVNULL, env=environment)


def kernel() -> tuple[Path, Path]:
    """Debian's current kernel (the package linux-image-amd64 depends on), unpacked: its image and modules."""
    depends = sh("apt-cache", "depends", "linux-image-amd64", capture_output=True, text=True).stdout
    package = next(line.split()[-1] for line in depends.splitlines() if "Depends: linux-image-" in line)
    unpacked = CACHE / package
    if not unpacked.exists():
        download = CACHE / "download"
        download.mkdir(parents=True, exist_ok=True)
        print(f"downloading {package}", file=sys.stderr, flush=True)
        sh("apt-get", "download", package, cwd=download, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deb = next(download.glob(f"{package}_*.deb"))
        sh("dpkg-deb", "-x", str(deb), str(unpacked.with_suffix(".part")))
        unpacked.with_suffix(".part").rename(unpacked)
        shutil.rmtree(download)
    image = next((unpacked / "boot").glob("vmlinuz-*"))
    return image, next((unpacked / "lib/modules").iterdir())


def build() -> Path:
    """Tandem built for a CPU without AVX-512 (the emulator's): -march given last overrides meson.build's native."""
    folder = CACHE / "build"
    if not (folder / "build.ninja").exists():
        sh("meson", "setup", str(folder), str(REPO), "-Dcpp_args=-march=x86-64-v2", stdout=subprocess.DEVNULL)
    print("building Tandem for the VM's CPU", file=sys.stderr, flush=True)
    sh("ninja", "-C", str(folder), stdout=subprocess.DEVNULL)
    return folder


def load_order(names: list[str], modules: Path) -> list[Path]:
    """The modules' files, each after those it depends on (modinfo's depends); one built into the kernel has none."""
    files = {path.stem.replace("-", "_"): path for path in modules.rglob("*.ko")}  # as the kernel names them
    order: list[Path] = []

    def visit(name: str) -> None:
        path = files.get(name)
        if path is None or path in order:
            return
        depends = sh("modinfo", "-F", "depends", str(path), capture_output=True, text=True).stdout.strip()
        for dependency in filter(None, depends.split(",")):
            visit(dependency)
        order.append(path)

    for name in names:
        visit(name)
    return order


def initramfs(modules: Path) -> Path:
    root = CACHE / "initramfs"
    shutil.rmtree(root, ignore_errors=True)
    for folder in ("bin", "mods", "proc", "sys", "dev", "newroot", "ro", "rw", "out"):
        (root / folder).mkdir(parents=True)
    shutil.copy(shutil.which("busybox"), root / "bin/busybox")
    order = load_order(MODULES, modules)
    for path in order:
        shutil.copy(path, root / "mods")
    (root / "init").write_text(INIT.format(modules=" ".join(path.name for path in order)))
    (root / "init").chmod(0o755)
    image = CACHE / "initrd.gz"
    files = sh("find", ".", cwd=root, capture_output=True).stdout
    archive = sh("cpio", "-o", "-H", "newc", cwd=root, input=files, capture_output=True).stdout
    image.write_bytes(subprocess.run(["gzip", "-1"], input=archive, capture_output=True, check=True).stdout)
    return image


def job(build_folder: Path, modules: Path, select: str) -> str:
    """What the VM runs as its first process: the machine as a cgroup-v2-only host has it, then the tests."""
    meson = " ".join(MESON_TESTS)
    files = " ".join(PYTEST_FILES)
    return textwrap.dedent(f"""\
        #!/bin/bash
        exec > /vmout/console.log 2>&1
        mount -t cgroup2 cgroup2 /sys/fs/cgroup
        mount -t tmpfs tmpfs /tmp; mount -t tmpfs tmpfs /run; mkdir -p /run/lock
        mkdir -p /dev/shm /dev/pts; mount -t tmpfs tmpfs /dev/shm; mount -t devpts devpts /dev/pts
        ip link set lo up
        mkdir -p /lib/modules && ln -sfn {modules} /lib/modules/$(uname -r) && depmod -a
        mount --bind {build_folder} {REPO}/build
        echo "kernel $(uname -r)" > /vmout/host.txt
        grep cgroup /proc/mounts >> /vmout/host.txt
        echo "controllers: $(cat /sys/fs/cgroup/cgroup.controllers)" >> /vmout/host.txt
        cd {REPO}
        meson test -C build --no-rebuild --print-errorlogs {meson} > /vmout/meson.log 2>&1
        echo $? > /vmout/meson.rc
        cp build/meson-logs/testlog.junit.xml /vmout/meson.junit.xml 2>/dev/null
        .venv/bin/python -m pytest -p no:cacheprovider --timeout=1200 -rs -k '{select}' \\
            --junitxml=/vmout/pytest.junit.xml {files} > /vmout/pytest.log 2>&1
        echo $? > /vmout/pytest.rc
        sync
        echo o > /proc/sysrq-trigger
        """)


def boot(image: Path, initrd: Path, out: Path, minutes: float) -> int:
    command = [
        "qemu-system-x86_64", "-accel", "tcg,thread=multi", "-cpu", "max", "-smp", "2", "-m", "6144",
        "-nographic", "-no-reboot", "-kernel", str(image), "-initrd", str(initrd),
        "-append", "console=ttyS0 quiet panic=-1 cgroup_no_v1=all",
        "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=root,mount_tag=hostroot",
        "-fsdev", f"local,id=out,path={out},security_model=none",
        "-device", "virtio-9p-pci,fsdev=out,mount_tag=out",
    ]  # fmt: skip
    print(f"booting the VM (at most {minutes:g} min); its log: {out / 'console.log'}", file=sys.stderr, flush=True)
    with open(out / "serial.log", "w") as serial:
        # The VM dies with this script, however it ends (PR_SET_PDEATHSIG), as a run's daemons do.
        vm = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=serial,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_the_control_plane,
        )
        try:
            return vm.wait(timeout=minutes * 60)
        except subprocess.TimeoutExpired:
            print("the VM's time is up: killed", file=sys.stderr)
            return -1
        finally:
            if vm.poll() is None:
                vm.send_signal(signal.SIGKILL)
                vm.wait()


def outcomes(junit: Path) -> list[dict]:
    """Each test case of a JUnit file: its name, outcome and, for a skip or a failure, the reason's first line."""
    if not junit.exists():
        return []
    cases = []
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        outcome, reason = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                said = (child.get("message") or child.text or "").strip()
                reason = said.splitlines()[0][:150] if said else ""
        classname = case.get("classname", "")
        name = f"{classname}::{case.get('name')}" if classname else case.get("name")
        cases.append({"test": name, "outcome": outcome, "reason": reason, "seconds": float(case.get("time") or 0)})
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", default=SELECT, help="pytest -k expression over the files the VM runs")
    parser.add_argument("--minutes", type=float, default=50, help="the VM's time, after which it is killed")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("error: run as root (the VM's tests reserve hugepages and set real-time policies)", file=sys.stderr)
        return 2
    CACHE.mkdir(parents=True, exist_ok=True)
    tools()
    image, modules = kernel()
    build_folder = build()
    initrd = initramfs(modules)
    out = CACHE / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    (out / "job.sh").write_text(job(build_folder, modules, args.select))
    boot(image, initrd, out, args.minutes)
    cases = outcomes(out / "meson.junit.xml") + outcomes(out / "pytest.junit.xml")
    if not (out / "host.txt").exists() or not cases:
        print(f"error: the VM ran no test: see {out / 'serial.log'} and {out / 'console.log'}", file=sys.stderr)
        return 1
    host = (out / "host.txt").read_text()
    counts = {o: sum(c["outcome"] == o for c in cases) for o in ("passed", "failed", "error", "skipped")}
    rows = [[c["test"], c["outcome"], f"{c['seconds']:.0f}", c["reason"]] for c in cases]
    text = (
        f"The cgroup tests on a cgroup-v2-only host: a VM on {machine_description()}\n"
        + "\n".join(f"  {line}" for line in host.strip().splitlines())
        + "\n"
        + ", ".join(f"{n} {o}" for o, n in counts.items())
        + "\n\n"
        + table(["test", "outcome", "s", "reason"], rows)
    )
    save_result("cgroup-v2-host", {"host": host, "select": args.select, "cases": cases, "counts": counts}, text)
    return 0 if cases and counts["failed"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
