"""A Debian kernel booted in QEMU over this machine's own files (read-only 9p, a tmpfs overlay for what its tests
write), for the tests a 2-vCPU host cannot hold: a host that mounts cgroup v2 only (bench/cgroup_v2_host.py) and one
with more cores (bench/many_core_host.py). Installs qemu-system-x86, busybox-static and cpio from Debian's packages
where missing, downloads the kernel Debian's linux-image-amd64 names, and builds Tandem once more for the virtual CPU
(QEMU's emulated CPU has no AVX-512, which -march=native may use here) under the cache folder below. The VM runs on
QEMU's emulator (TCG) where this host's /dev/kvm cannot start a stock kernel: slow, but the tests derive their
thresholds from what they measure. The VM is killed when its time is up or its script stops."""

from __future__ import annotations

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

from controlplane.machine.child_death import die_with_the_control_plane  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

CACHE = Path("/var/cache/tandem/vm-host")
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


def job(build_folder: Path, modules: Path, meson_tests: list[str], pytest_files: list[str], select: str) -> str:
    """What the VM runs as its first process: the machine as a cgroup-v2-only host has it (cgroup2 at /sys/fs/cgroup,
    tmpfs at /tmp and /run), then the C++ tests `meson_tests` and the pytest tests of `pytest_files` that `select`
    (a -k expression) picks."""
    meson = " ".join(meson_tests)
    files = " ".join(pytest_files)
    meson_line = (
        f"meson test -C build --no-rebuild --print-errorlogs {meson} > /vmout/meson.log 2>&1" if meson_tests else "true"
    )
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
        echo "cpus: $(nproc)" >> /vmout/host.txt
        grep cgroup /proc/mounts >> /vmout/host.txt
        echo "controllers: $(cat /sys/fs/cgroup/cgroup.controllers)" >> /vmout/host.txt
        cd {REPO}
        {meson_line}
        echo $? > /vmout/meson.rc
        cp build/meson-logs/testlog.junit.xml /vmout/meson.junit.xml 2>/dev/null
        .venv/bin/python -m pytest -p no:cacheprovider --timeout=1200 -rs -k '{select}' \\
            --junitxml=/vmout/pytest.junit.xml {files} > /vmout/pytest.log 2>&1
        echo $? > /vmout/pytest.rc
        sync
        echo o > /proc/sysrq-trigger
        """)


def boot(image: Path, initrd: Path, out: Path, minutes: float, cpus: int, append: str) -> int:
    command = [
        "qemu-system-x86_64", "-accel", "tcg,thread=multi", "-cpu", "max", "-smp", str(cpus), "-m", "6144",
        "-nographic", "-no-reboot", "-kernel", str(image), "-initrd", str(initrd),
        "-append", f"console=ttyS0 quiet panic=-1 {append}",
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


def run_tests(
    name: str, meson_tests: list[str], pytest_files: list[str], select: str, cpus: int, append: str, minutes: float
) -> tuple[str, list[dict]] | None:
    """Boots the VM (`cpus` virtual CPUs, `append` on the kernel's command line) to run the tests; what it says of
    itself (host.txt) and each test's outcome, or None (said) when it ran none. Needs root."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tools()
    image, modules = kernel()
    build_folder = build()
    initrd = initramfs(modules)
    out = CACHE / f"out-{name}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    (out / "job.sh").write_text(job(build_folder, modules, meson_tests, pytest_files, select))
    boot(image, initrd, out, minutes, cpus, append)
    cases = outcomes(out / "meson.junit.xml") + outcomes(out / "pytest.junit.xml")
    if not (out / "host.txt").exists() or not cases:
        print(f"error: the VM ran no test: see {out / 'serial.log'} and {out / 'console.log'}", file=sys.stderr)
        return None
    return (out / "host.txt").read_text(), cases


def must_be_root() -> bool:
    if os.geteuid() != 0:
        print("error: run as root (the VM's tests reserve hugepages and set real-time policies)", file=sys.stderr)
        return False
    return True


def tested_host_text(title: str, host: str, cases: list[dict]) -> tuple[str, dict]:
    """The saved result's text (the VM, the counts, a row a test) and the outcomes' counts."""
    counts = {o: sum(c["outcome"] == o for c in cases) for o in ("passed", "failed", "error", "skipped")}
    rows = [[c["test"], c["outcome"], f"{c['seconds']:.0f}", c["reason"]] for c in cases]
    text = (
        f"{title}: a VM on {machine_description()}\n"
        + "\n".join(f"  {line}" for line in host.strip().splitlines())
        + "\n"
        + ", ".join(f"{n} {o}" for o, n in counts.items())
        + "\n\n"
        + table(["test", "outcome", "s", "reason"], rows)
    )
    return text, counts
