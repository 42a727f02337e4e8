"""A real Kubernetes control plane on this machine for the tests and benchmarks: etcd and kube-apiserver on loopback
ports of their own, in a temporary folder, killed with the process that started them (PR_SET_PDEATHSIG) and
removed after; kubectl talks to it, kwok keeps fake nodes Ready, and Tandem's operator and node agents run
against it."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench.local_ports import free_port
from bench.node_hosts import NodeHost, signal_agent
from controlplane.kubernetes.crd import CRD_PATH, GROUP, PLURAL
from controlplane.machine.child_death import die_with_the_control_plane, end

REPO = Path(__file__).resolve().parents[1]

START_SECONDS = 60  # etcd and kube-apiserver are ready in ~2 s here; a loaded CI host gets a wide margin
BINARIES = REPO / "scripts" / "kubernetes-binaries.sh"
TOKEN = "tandem-test-token"
# The services' virtual addresses: in the benchmarking range, never an address of the machine's own network.
SERVICE_RANGE = "198.18.16.0/20"
FAKE_NODE = "kwok.x-k8s.io/node"  # kwok manages the Nodes with this annotation (value: fake)


class ApiServer:
    """Started by start(), stopped by stop(); kubectl(*args) runs kubectl against it."""

    def __init__(self, address: str = "127.0.0.1") -> None:
        self.address = address  # where it listens (and etcd on loopback): an address of this machine's
        self.folder = Path(tempfile.mkdtemp(prefix="tandem-kube-"))
        self.processes: list[subprocess.Popen] = []
        self.binaries: Path | None = None
        self.port = 0

    def start(self) -> ApiServer:
        built = subprocess.run([str(BINARIES)], capture_output=True, text=True, timeout=1800)
        if built.returncode != 0:
            raise RuntimeError(f"building kube-apiserver and kubectl failed:\n{built.stderr[-3000:]}")
        self.binaries = Path(built.stdout.strip().splitlines()[-1])
        if not shutil.which("etcd"):
            raise RuntimeError("etcd is missing (Debian's etcd-server; ./scripts/setup.sh installs it)")
        client, peer, self.port = free_port(), free_port(), free_port()
        self._spawn(
            "etcd",
            [
                "etcd",
                f"--data-dir={self.folder / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{client}",
                f"--advertise-client-urls=http://127.0.0.1:{client}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=default=http://127.0.0.1:{peer}",
            ],
        )
        key = self.folder / "service-accounts.key"
        subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
        (self.folder / "tokens.csv").write_text(f"{TOKEN},tandem-test,tandem-test,system:masters\n")
        self._spawn(
            "kube-apiserver",
            [
                str(self.binaries / "kube-apiserver"),
                f"--etcd-servers=http://127.0.0.1:{client}",
                f"--bind-address={self.address}",
                f"--secure-port={self.port}",
                f"--cert-dir={self.folder / 'certificates'}",
                f"--token-auth-file={self.folder / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={key}",
                f"--service-account-signing-key-file={key}",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-cluster-ip-range={SERVICE_RANGE}",
                "--allow-privileged=true",  # as kubeadm sets it: the tandem-node DaemonSet is privileged
                # A kubelet node's name is no host name here: logs and exec reach its kubelet at its address.
                "--kubelet-preferred-address-types=InternalIP",
            ],
        )
        (self.folder / "kubeconfig").write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters: [{{name: test, cluster: {{server: 'https://{self.address}:{self.port}', "
            "insecure-skip-tls-verify: true}}]\n"
            f"users: [{{name: test, user: {{token: {TOKEN}}}}}]\n"
            "contexts: [{name: test, context: {cluster: test, user: test}}]\ncurrent-context: test\n"
        )
        deadline = time.monotonic() + START_SECONDS
        while True:
            ready = self.kubectl("get", "--raw", "/readyz")
            if ready.returncode == 0 and ready.stdout.strip() == "ok":
                return self
            self._check_running()
            if time.monotonic() > deadline:
                raise RuntimeError(f"kube-apiserver not ready in {START_SECONDS} s: {ready.stderr[-500:]}")
            time.sleep(0.5)

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.binaries / "kubectl"), f"--kubeconfig={self.folder / 'kubeconfig'}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def start_controllers(self) -> None:
        """kube-controller-manager (a DaemonSet's pods made, service account tokens' CA published) and kube-scheduler
        (pods bound to nodes), as a cluster with real kubelets needs."""
        kubeconfig = f"--kubeconfig={self.folder / 'kubeconfig'}"
        self._spawn(
            "kube-controller-manager",
            [
                str(self.binaries / "kube-controller-manager"),
                kubeconfig,
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--root-ca-file={self.folder / 'certificates' / 'apiserver.crt'}",
                f"--service-account-private-key-file={self.folder / 'service-accounts.key'}",
                "--use-service-account-credentials=false",
            ],
        )
        self._spawn(
            "kube-scheduler",
            [
                str(self.binaries / "kube-scheduler"),
                kubeconfig,
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
            ],
        )

    def start_kwok(self) -> None:
        """kwok: every Node annotated kwok.x-k8s.io/node=fake is made Ready and kept so by heartbeats, as a kubelet
        would, with no machine behind it."""
        stages = self.binaries / "kwok-stages"
        self._spawn(
            "kwok",
            [
                str(self.binaries / "kwok"),
                f"--kubeconfig={self.folder / 'kubeconfig'}",
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={FAKE_NODE}=fake",
                "--node-ip=198.18.0.250",  # the benchmarking range, as every address here
                "--cidr=198.18.128.0/17",
                "-c",
                str(stages / "node-initialize.yaml"),
                "-c",
                str(stages / "node-heartbeat.yaml"),
            ],
        )

    def add_fake_nodes(self, nodes: list[dict], cpus: int) -> None:
        """Node objects (metadata: name, annotations) of `cpus` CPUs each that kwok keeps Ready; returns once every
        one is."""
        for first in range(0, len(nodes), 100):
            items = []
            for node in nodes[first : first + 100]:
                metadata = dict(node, annotations={**node.get("annotations", {}), FAKE_NODE: "fake"})
                capacity = {"cpu": str(cpus), "memory": "64Gi", "pods": "110"}
                status = {"capacity": capacity, "allocatable": capacity}
                items.append({"apiVersion": "v1", "kind": "Node", "metadata": metadata, "status": status})
            created = self.kubectl(
                "create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
            )
            if created.returncode != 0:
                raise RuntimeError(f"creating nodes: {created.stderr[-1000:]}")
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            listed = json.loads(self.kubectl("get", "nodes", "-o", "json").stdout or "{}").get("items", [])
            ready = sum(
                any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in (n.get("status") or {}).get("conditions", [])
                )
                for n in listed
            )
            if ready >= len(nodes):
                return
            self._check_running()
            time.sleep(0.5)
        raise RuntimeError(f"kwok made {ready} of {len(nodes)} nodes Ready in {START_SECONDS} s")

    def stop(self) -> None:
        for process in reversed(self.processes):
            end(process, 10)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _spawn(self, name: str, command: list[str]) -> None:
        log = open(self.folder / f"{name}.log", "w")  # noqa: SIM115 (the process holds it until it ends)
        self.processes.append(
            subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_the_control_plane)
        )

    def _check_running(self) -> None:
        for process in self.processes:
            if process.poll() is not None:
                name = Path(process.args[0]).name
                log = (self.folder / f"{name}.log").read_text()[-2000:]
                raise RuntimeError(f"{name} exited with status {process.returncode}:\n{log}")


@contextlib.contextmanager
def api_server_with_the_crd(address: str = "127.0.0.1"):
    """An API server on `address` that has the ServiceChain CRD, Established; stopped on every way out."""
    server = ApiServer(address)
    try:
        server.start()
        applied = server.kubectl("apply", "-f", str(CRD_PATH))
        if applied.returncode != 0:
            raise RuntimeError(f"applying the CRD: {applied.stderr}")
        established = server.kubectl("wait", "--for=condition=Established", "--timeout=30s", f"crd/{PLURAL}.{GROUP}")
        if established.returncode != 0:
            raise RuntimeError(f"the CRD not Established: {established.stderr}")
        yield server
    finally:
        server.stop()


# The control token of the agents and the operator here (a cluster's is a Secret made with openssl rand -hex 16).
TOKEN = "0123456789abcdef0123456789abcdef"
SETTLE_S = 90  # an agent's NF processes start in seconds; a loaded CI host gets a wide margin


def token_file(folder: Path) -> Path:
    path = folder / "control-token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


def wait_for(condition, what: str, process: subprocess.Popen | None = None, seconds: float = SETTLE_S):
    """condition()'s first true value, asked every 0.3 s; RuntimeError after `seconds`, or when `process` ends (with
    the last of its log)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"waiting for {what}: the process ended: {process.log.read_text()[-3000:]}")
        time.sleep(0.3)
    raise RuntimeError(f"{what} did not happen in {seconds} s")


def _logged(command: list[str], log: Path) -> subprocess.Popen:
    with open(log, "w") as output:  # the child holds its own copy of the file
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, preexec_fn=die_with_the_control_plane
        )
    process.log = log
    return process


@contextlib.contextmanager
def operator(cluster: ApiServer, folder: Path, *options: str):
    """`./tandem operator` against the cluster, its output in folder/operator.log (process.log); stopped (SIGTERM)
    on every way out."""
    command = [str(REPO / "tandem"), "operator", "--kubeconfig", str(cluster.folder / "kubeconfig"), *options]
    process = _logged(command + ["--token-file", str(token_file(folder))], folder / "operator.log")
    try:
        yield process
    finally:
        end(process, 20)


@contextlib.contextmanager
def node_agent(
    cluster: ApiServer,
    folder: Path,
    node: str,
    port: int,
    spec: str,
    measure: str,
    name: str,
    host: str = "127.0.0.1",
    within: tuple[str, ...] = (),
):
    """A node's agent, `./tandem node` (root): it measures the costs of its spec's NFs and of `measure`'s, serves
    on host:port with the token, and reports itself on Node `node`; yields (process, control, results path)
    once its own chain runs, and stops it (SIGTERM: the chains drain, every machine change is undone) on every way
    out. `within`: the command it runs under (a node of its own: bench/node_hosts.py)."""
    from controlplane.launch.control_client import Control

    (folder / f"{name}.yaml").write_text(spec)
    (folder / f"{name}-measure.yaml").write_text(measure)
    out = folder / f"{name}.json"
    command = [*within, str(REPO / "tandem"), "node", str(folder / f"{name}.yaml")]
    command += ["--socket", str(folder / f"{name}.sock"), "--json", str(out), "--quiet", "--listen", f"{host}:{port}"]
    command += ["--token-file", str(token_file(folder)), "--measure", str(folder / f"{name}-measure.yaml")]
    command += ["--node", node, "--kubeconfig", str(cluster.folder / "kubeconfig")]
    process = _logged(command, folder / f"{name}.log")
    try:
        control = Control(tcp=(host, port), token=TOKEN)
        # It measures its NFs' costs first (once: they are cached), then serves.
        wait_for(lambda: _runs_chains(control), "the agent to come up", process, seconds=300)
        yield process, control, out
    finally:
        if within:
            signal_agent(process)
        end(process, 60)


def host_agent(cluster: ApiServer, folder: Path, host: NodeHost, port: int, measure: str, name: str):
    """node_agent on a node host (bench/node_hosts.py), on its cores: its own counter chain, under coop over the
    fair policy (one host's NFs share a CPU with the other's control plane and the API server's, which a
    real-time poller would starve)."""
    spec = f"""\
name: {host.node}
traffic: {{rate: 10 kpps, size: 64, flows: 16}}
control_core: {host.control_core}
placement_cores: [{host.nf_core}]
scheduler: {{name: coop, options: {{policy: cfs}}}}
chains:
  - name: own
    nfs:
      - {{name: own-count, type: counter, core: {host.nf_core}}}
"""
    return node_agent(cluster, folder, host.node, port, spec, measure, name, host.address, host.within())


def _runs_chains(control) -> bool:
    try:
        return bool(control.status().chains)
    except Exception:  # noqa: BLE001 - not up yet
        return False


# A node agent as the tests and the heal benchmark run it: its own counter chain (a service runs at least one), and a
# firewall it measures and offers besides; and a ServiceChain of that firewall and a counter at a rate one core
# carries many times over on any host.
AGENT_SPEC = """\
name: node-a
traffic: {rate: 50 kpps, size: 64, flows: 16}
scheduler: coop
chains:
  - name: own
    nfs:
      - {name: own-count, type: counter, core: 1}
"""
AGENT_OFFERS = "- {type: firewall, args: {synthetic_rules: 10}}\n"
FIREWALL_AND_COUNTER = [
    {"name": "fw", "type": "firewall", "args": {"synthetic_rules": 10}},
    {"name": "count", "type": "counter"},
]


def service_chain(name: str, rate: str, nfs: list[dict]) -> dict:
    """A ServiceChain of one line of `nfs` at `rate`, placed on the fewest cores."""
    return {
        "apiVersion": "tandem.dev/v1alpha1",
        "kind": "ServiceChain",
        "metadata": {"name": name},
        "spec": {
            "placement": "fewest_cores",
            "traffic": {"rate": rate, "size": 64, "flows": 16},
            "chains": [{"name": "web", "nfs": nfs}],
        },
    }


def delivering(control, resource: str) -> bool:
    """Whether a chain of `resource` carries packets out of the agent (its last part, where it is cut); false while
    the agent does not answer (between two lives)."""
    try:
        chains = control.status().chains
    except Exception:  # noqa: BLE001 - the agent is between lives
        return False
    return any(c.name.startswith(resource) and c.delivered > 0 and not c.removed for c in chains)


def node_annotations(cluster: ApiServer, name: str) -> dict:
    """The Node's annotations: its agent's report (tandem_nodes.py) once it wrote one."""
    return json.loads(cluster.kubectl("get", "node", name, "-o", "json").stdout)["metadata"].get("annotations", {})


def add_ready_node(cluster: ApiServer, name: str) -> None:
    """A Node as its kubelet registers it, Ready; its Tandem annotations are its agent's to write."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    created = cluster.kubectl("create", "-f", "-", stdin=json.dumps(node))
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "a node of this machine"}
    ready |= {"lastHeartbeatTime": now, "lastTransitionTime": now}
    status = json.dumps({"status": {"conditions": [ready]}})
    patched = cluster.kubectl("patch", "node", name, "--subresource=status", "--type=merge", "-p", status)
    if created.returncode != 0 or patched.returncode != 0:
        raise RuntimeError(f"registering node {name}: {created.stderr}{patched.stderr}")
