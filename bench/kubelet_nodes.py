"""Real Kubernetes nodes on the node hosts (bench/node_hosts.py): on each host, containerd and a kubelet in the host's
network namespace and in PID and mount namespaces of their own, under a cgroup root of their own, with the images
(Tandem's, built with debootstrap, and the pause image: scripts/tandem-image.sh) imported into the node's containerd.
Every process of a node (its pods' with it) ends with the node, and every mount it made (its containers' roots, its
pods' hugepage volumes) goes with its mount namespace; a tmpfs over /run, /var/log and /var/lib/kubelet there keeps the
runtime files, pod logs and device-plugin socket a kubelet and containerd write to fixed paths off the machine's own
(the socket's path ignores --root-dir: two nodes' kubelets once raced for one, the second failing "address already in
use", and the machine kept it). What a kubelet changes on the
machine itself (its kernel tunables, the hugepages its pods ask for) is set before it starts and put back after;
every cgroup it made is removed. Two kubelets share this machine's CPUs, so neither uses the static CPU policy: the
tests give each node's agent its cores in its spec, as node_hosts does."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.kubernetes_cluster import ApiServer
from bench.local_ports import free_port
from bench.node_hosts import NodeHost
from controlplane.machine.child_death import die_with_the_control_plane

REPO = Path(__file__).resolve().parents[1]
IMAGES = REPO / "scripts" / "tandem-image.sh"
PAUSE_IMAGE = "localhost/pause:tandem"
CGROUPS = Path("/sys/fs/cgroup")
HUGEPAGES = Path("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")
KUBELET_FIXED_STATE = Path("/var/lib/kubelet")  # where a kubelet keeps its device-plugin socket, whatever --root-dir
# What a kubelet sets these to when it starts (unless told to protect the kernel's defaults, when it refuses to start
# where they differ): set here first, put back after.
KUBELET_TUNABLES = {
    "vm/overcommit_memory": "1",
    "vm/panic_on_oom": "0",
    "kernel/panic": "10",
    "kernel/panic_on_oops": "1",
    "kernel/keys/root_maxkeys": "1000000",
    "kernel/keys/root_maxbytes": "25000000",
}
READY_S = 120  # a node is Ready in ~2 s here; a loaded CI host gets a wide margin


def build_images(folder: Path) -> Path:
    """tandem.tar and pause.tar (OCI archives) in `folder`, from a base image built once and then cached."""
    built = subprocess.run([str(IMAGES), str(folder)], capture_output=True, text=True, timeout=1800)
    if built.returncode != 0:
        raise RuntimeError(f"building the images failed:\n{built.stderr[-3000:]}")
    return Path(built.stdout.strip().splitlines()[-1])


@dataclass
class KubeletNode:
    host: NodeHost
    folder: Path
    process: subprocess.Popen | None = None

    @property
    def socket(self) -> Path:
        return self.folder / "containerd.sock"

    @property
    def cgroup_root(self) -> str:
        return f"tdk-{self.host.node}"

    def start(self, cluster: ApiServer) -> None:
        for name in ("containerd", "kubelet", "cni"):
            (self.folder / name).mkdir(parents=True, exist_ok=True)
        (self.folder / "containerd.toml").write_text(self._containerd_config())
        # Only host-network pods run here: a loopback network is all a pod sandbox needs, and it makes the runtime's
        # network ready (a node is not Ready without).
        loopback = {"cniVersion": "1.0.0", "name": "loopback", "plugins": [{"type": "loopback"}]}
        (self.folder / "cni" / "10-loopback.conflist").write_text(json.dumps(loopback))
        (self.folder / "kubelet.yaml").write_text(self._kubelet_config())
        shutil.copy(cluster.folder / "kubeconfig", self.folder / "kubeconfig")
        kubelet = [
            str(cluster.binaries / "kubelet"),
            f"--config={self.folder / 'kubelet.yaml'}",
            f"--kubeconfig={self.folder / 'kubeconfig'}",
            f"--root-dir={self.folder / 'kubelet'}",
            f"--hostname-override={self.host.node}",
            f"--node-ip={self.host.address}",
        ]
        # The PID namespace's first process starts containerd, then becomes the kubelet: killing it ends the node.
        script = (
            "mount -t tmpfs tmpfs /run && mount -t tmpfs tmpfs /var/log && mount -t tmpfs tmpfs /var/lib/kubelet && "
            f"containerd --config {self.folder / 'containerd.toml'} > {self.folder / 'containerd.log'} 2>&1 & "
            f"for i in $(seq 300); do [ -S {self.socket} ] && break; sleep 0.1; done; "
            f'exec "$@" > {self.folder / "kubelet.log"} 2>&1'
        )
        self.process = subprocess.Popen(
            [
                *("nsenter", f"--net=/run/netns/{self.host.namespace}"),
                *("unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"),
                *("sh", "-c", script, "kubelet-node", *kubelet),
            ],
            preexec_fn=die_with_the_control_plane,
        )

    def import_images(self, images: Path) -> None:
        deadline = time.monotonic() + READY_S
        while not self.socket.exists():
            self.check_running()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.host.node}: containerd did not start: {self.log('containerd')}")
            time.sleep(0.2)
        for archive in ("pause.tar", "tandem.tar"):
            imported = subprocess.run(
                ["ctr", f"--address={self.socket}", "-n", "k8s.io", "images", "import", str(images / archive)],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if imported.returncode != 0:
                self.check_running()  # a node whose processes ended: its kubelet's and containerd's logs say why
                raise RuntimeError(f"{self.host.node}: importing {archive}: {imported.stderr[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # unshare, killed, kills the namespace's first process, and with it every process of the node.
            self.process.kill()
        if self.process is not None:
            self.process.wait()

    def log(self, name: str) -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"

    def check_running(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"{self.host.node}'s kubelet exited: {self.log('kubelet')}\n{self.log('containerd')}")

    def _containerd_config(self) -> str:
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        return f"""\
version = 2
root = "{self.folder / "containerd" / "root"}"
state = "{self.folder / "containerd" / "state"}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "{self.socket}"
[{cri}]
  sandbox_image = "{PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false
  [{cri}.cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{self.folder / "cni"}"
[plugins."io.containerd.internal.v1.opt"]
  path = "{self.folder / "containerd" / "opt"}"
"""

    def _kubelet_config(self) -> str:
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "address": self.host.address,
            "port": free_port(),
            "readOnlyPort": 0,
            "healthzPort": 0,
            "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
            "authorization": {"mode": "AlwaysAllow"},
            "cgroupDriver": "cgroupfs",
            "cgroupRoot": f"/{self.cgroup_root}",
            "failCgroupV1": False,  # this machine's cgroups are v1 (hybrid)
            "failSwapOn": False,
            "containerRuntimeEndpoint": f"unix://{self.socket}",
            "protectKernelDefaults": True,  # set by kubelet_nodes() first, and put back after
            "makeIPTablesUtilChains": False,
            "serializeImagePulls": False,
            "cpuManagerPolicy": "none",  # two kubelets share the CPUs (the module's header)
            # Nor does a pod's CPU limit hold it to a quota: an agent's NF core and control core are two CPUs of the
            # machine, whatever its pod asked of its node.
            "cpuCFSQuota": False,
            # The images are imported, never pulled: nothing may collect them; and no disk pressure evicts a pod.
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
            "resolvConf": "/etc/resolv.conf",
        }
        return json.dumps(config, indent=1)


def _cgroup_hierarchies() -> list[Path]:
    """The machine's cgroup hierarchies (each v1 controller's, the v2 one) where a node's root is made."""
    with open("/proc/mounts") as mounts:
        points = [Path(line.split()[1]) for line in mounts if line.split()[2] in ("cgroup", "cgroup2")]
    return [p for p in points if p.is_relative_to(CGROUPS)]


def _make_cgroup_root(name: str) -> None:
    for hierarchy in _cgroup_hierarchies():
        root = hierarchy / name
        root.mkdir(exist_ok=True)
        for inherited in ("cpuset.cpus", "cpuset.mems"):  # an empty cpuset admits no task
            if (root / inherited).exists():
                (root / inherited).write_text((hierarchy / inherited).read_text())


def _remove_cgroup_root(name: str) -> list[str]:
    """Removes the root's tree, deepest first; returns what could not be removed (tasks still in it)."""
    left = []
    for hierarchy in _cgroup_hierarchies():
        root = hierarchy / name
        if not root.exists():
            continue
        for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [root]:
            for _ in range(50):  # a killed task leaves its cgroup a moment after it ends
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                left.append(str(folder))
    return left


@contextlib.contextmanager
def _kernel_set_for_kubelets(hugepages: int) -> Iterator[None]:
    """The kernel tunables a kubelet wants, and `hugepages` more free 2 MB pages for the nodes' pods (a kubelet
    reports the pages reserved when it starts as its node's capacity); put back on every way out."""
    tunables = {name: (Path("/proc/sys") / name).read_text().strip() for name in KUBELET_TUNABLES}
    pages = HUGEPAGES.read_text().strip()
    try:
        for name, value in KUBELET_TUNABLES.items():
            (Path("/proc/sys") / name).write_text(value)
        free = int((HUGEPAGES.parent / "free_hugepages").read_text())
        if free < hugepages:
            HUGEPAGES.write_text(str(int(pages) + hugepages - free))
        yield
    finally:
        HUGEPAGES.write_text(pages)
        for name, value in tunables.items():
            (Path("/proc/sys") / name).write_text(value)


def node_ready(cluster: ApiServer, name: str) -> bool:
    got = cluster.kubectl("get", "node", name, "-o", "json")
    if got.returncode != 0:
        return False
    conditions = json.loads(got.stdout).get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _remove_workloads(cluster: ApiServer) -> None:
    """Every workload and pod deleted and gone (their containers stopped by their kubelets with SIGTERM, so a Tandem
    agent drains and undoes what it changed), before the nodes are killed."""
    cluster.kubectl("delete", "daemonsets,deployments", "--all", "--all-namespaces", "--wait=false")
    deleted = subprocess.run(
        [str(cluster.binaries / "kubectl"), f"--kubeconfig={cluster.folder / 'kubeconfig'}", "delete", "pods"]
        + ["--all", "--all-namespaces", "--timeout=120s"],
        capture_output=True,
        text=True,
        timeout=150,
    )
    if deleted.returncode != 0:
        print(f"kubelet_nodes: pods not all gone in 120 s: {deleted.stderr[-500:]}")


@contextlib.contextmanager
def _kubelet_state_mount_point() -> Iterator[None]:
    """/var/lib/kubelet, where each node mounts a tmpfs of its own: made here if the machine has none, and removed
    after (empty: what the kubelets wrote there went with their mount namespaces)."""
    made = not KUBELET_FIXED_STATE.exists()
    KUBELET_FIXED_STATE.mkdir(parents=True, exist_ok=True)
    try:
        yield
    finally:
        if made:
            with contextlib.suppress(OSError):
                KUBELET_FIXED_STATE.rmdir()


@contextlib.contextmanager
def kubelet_nodes(cluster: ApiServer, hosts: tuple[NodeHost, ...], hugepages: int) -> Iterator[list[KubeletNode]]:
    """A kubelet node on each host, registered with `cluster` (whose controllers run) and Ready, the images in its
    containerd; `hugepages` 2 MB pages free for their pods in all. Stopped, and everything of them removed, on every
    way out."""
    folder = Path(tempfile.mkdtemp(prefix="tandem-kubelets-"))
    nodes = [KubeletNode(host, folder / host.node) for host in hosts]
    try:
        images = build_images(folder / "images")
        for node in nodes:  # an earlier run's, stopped before it could remove them
            _remove_cgroup_root(node.cgroup_root)
        with _kernel_set_for_kubelets(hugepages), _kubelet_state_mount_point():
            try:
                for node in nodes:
                    _make_cgroup_root(node.cgroup_root)
                    node.start(cluster)
                for node in nodes:
                    node.import_images(images)
                deadline = time.monotonic() + READY_S
                for node in nodes:
                    while not node_ready(cluster, node.host.node):
                        node.check_running()
                        if time.monotonic() > deadline:
                            raise RuntimeError(f"{node.host.node} not Ready in {READY_S} s: {node.log('kubelet')}")
                        time.sleep(0.5)
                yield nodes
            finally:
                with contextlib.suppress(Exception):
                    _remove_workloads(cluster)
                for node in nodes:
                    node.stop()
                left = [folder for node in nodes for folder in _remove_cgroup_root(node.cgroup_root)]
                if left:
                    raise RuntimeError(f"cgroups of the nodes still in use: {left}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
