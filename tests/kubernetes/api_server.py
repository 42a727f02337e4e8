"""A real Kubernetes API server for the tests: etcd and kube-apiserver on loopback ports of their own, in a
temporary folder, killed with the test process (PR_SET_PDEATHSIG) and removed after; kubectl talks to it."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from conftest import REPO, end
from controlplane.machine.child_death import die_with_the_control_plane

START_SECONDS = 60  # etcd and kube-apiserver are ready in ~2 s here; a loaded CI host gets a wide margin
BINARIES = REPO / "scripts" / "kubernetes-binaries.sh"
TOKEN = "tandem-test-token"
# The services' virtual addresses: in the benchmarking range, never an address of the machine's own network.
SERVICE_RANGE = "198.18.16.0/20"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ApiServer:
    """Started by start(), stopped by stop(); kubectl(*args) runs kubectl against it."""

    def __init__(self) -> None:
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
        client, peer, self.port = _free_port(), _free_port(), _free_port()
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
                "--bind-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--cert-dir={self.folder / 'certificates'}",
                f"--token-auth-file={self.folder / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={key}",
                f"--service-account-signing-key-file={key}",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-cluster-ip-range={SERVICE_RANGE}",
            ],
        )
        (self.folder / "kubeconfig").write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters: [{{name: test, cluster: {{server: 'https://127.0.0.1:{self.port}', "
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
