"""Tandem installed on the kubelet nodes (bench/kubelet_nodes.py) as its README says: the namespace, the control
token's Secret, the nodes labelled, and `kubectl apply -k` of deploy/kubernetes through an overlay that changes only
what this machine needs: each node's agent its cores in its spec (two kubelets share two CPUs, so neither has the
static CPU policy, and each agent's control plane sits on the other node's NF core, as on the node hosts), the API
server's address (there is no kube-proxy for the `kubernetes` Service's address), folders of the machine for the
agents' results and measured costs, one CPU for each agent's pod (the other for the operator's, on its node's
network: pods have no other here, a loopback CNI only)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from bench.kubernetes_cluster import TOKEN, ApiServer, node_annotations, wait_for
from bench.node_hosts import MACHINE_ADDRESS, NodeHost
from controlplane.kubernetes.tandem_nodes import COSTS
from controlplane.launch.control_client import Control

REPO = Path(__file__).resolve().parents[1]
NAMESPACE = "tandem-system"
AGENT_PORT = 7100  # the DaemonSet's --listen
HUGEPAGES = 1024  # 2 MB pages the nodes need free: the DaemonSet asks 1 GiB for each node's pod
POD_READY_S = 300  # an agent measures its NFs before it serves (a minute or two on a loaded CI host)


def _node_spec(host: NodeHost) -> str:
    """The agent's own spec on `host`: a counter chain (a service runs one at least), coop over the fair policy (a
    real-time poller would starve the other node's control plane, which shares its CPU)."""
    return (
        f"name: {host.node}\ntraffic: {{rate: 10 kpps, size: 64, flows: 16}}\n"
        f"control_core: {host.control_core}\nplacement_cores: [{host.nf_core}]\n"
        "scheduler: {name: coop, options: {policy: cfs}}\n"
        f"chains:\n  - name: own\n    nfs:\n      - {{name: own-count, type: counter, core: {host.nf_core}}}\n"
    )


def overlay(folder: Path, cluster: ApiServer, hosts: tuple[NodeHost, ...], offers: str) -> Path:
    """A kustomization of deploy/kubernetes in `folder` with this machine's patches (the module's header); the
    agents measure and offer the NFs of `offers` (a YAML list of {type, args}) and write their results to
    folder/results/NODE.json."""
    specs = {f"{host.node}.yaml": _node_spec(host) for host in hosts} | {"measure.yaml": offers}
    for name in ("results", "costs"):
        (folder / name).mkdir(exist_ok=True)
    api_server = [
        {"name": "KUBERNETES_SERVICE_HOST", "value": MACHINE_ADDRESS},
        {"name": "KUBERNETES_SERVICE_PORT", "value": str(cluster.port)},
    ]
    agent = {
        "name": "agent",
        "command": [
            *("/opt/tandem/tandem", "node", "/etc/tandem/$(NODE_NAME).yaml", f"--listen=0.0.0.0:{AGENT_PORT}"),
            *(f"--advertise=$(HOST_IP):{AGENT_PORT}", "--token-file=/var/run/secrets/tandem/token"),
            *("--measure=/etc/tandem/measure.yaml", "--json=/results/$(NODE_NAME).json", "--quiet"),
        ],
        "env": api_server,
        "volumeMounts": [{"name": "results", "mountPath": "/results"}],
        "resources": {
            "requests": {"cpu": "1", "memory": "2Gi", "hugepages-2Mi": "1Gi"},
            "limits": {"cpu": "1", "memory": "2Gi", "hugepages-2Mi": "1Gi"},
        },
    }
    volumes = [
        {"name": "results", "hostPath": {"path": str(folder / "results")}},
        {"name": "costs", "hostPath": {"path": str(folder / "costs")}},
    ]
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "tandem-node"},
        "spec": {"template": {"spec": {"containers": [agent], "volumes": volumes}}},
    }
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tandem-node"}, "data": specs}
    # The operator on the host's network (pods have no other here), with a CPU of its node's two to ask for: the
    # agents' pods ask one each here (their cores are in their specs), so that the CPU shares of the operator's pod
    # weigh as theirs where they share a CPU (asking none, its share of a CPU that an NF polls is ~0).
    operator = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "tandem-operator"},
        "spec": {
            "template": {
                "spec": {
                    "hostNetwork": True,
                    "dnsPolicy": "ClusterFirstWithHostNet",
                    "containers": [
                        {
                            "name": "operator",
                            "env": api_server,
                            "resources": {"requests": {"cpu": "1", "memory": "256Mi"}},
                        }
                    ],
                }
            }
        },
    }
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(REPO / "deploy" / "kubernetes", folder)],
        "patches": [
            {"patch": json.dumps(daemonset)},
            {"patch": json.dumps(config)},
            {"patch": json.dumps(operator)},
        ],
    }
    (folder / "kustomization.yaml").write_text(json.dumps(kustomization, indent=1))
    return folder


def _kubectl(cluster: ApiServer, *args: str) -> None:
    done = cluster.kubectl(*args)
    if done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {done.stderr}")


def agent_pods(cluster: ApiServer) -> dict[str, dict]:
    """node -> its tandem-node pod."""
    got = cluster.kubectl("-n", NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=tandem-node", "-o", "json")
    return {pod["spec"].get("nodeName"): pod for pod in json.loads(got.stdout or '{"items": []}')["items"]}


def operator_running(cluster: ApiServer) -> bool:
    got = cluster.kubectl("-n", NAMESPACE, "get", "pods", "-l", "app.kubernetes.io/name=tandem-operator", "-o", "json")
    pods = json.loads(got.stdout or '{"items": []}')["items"]
    return any(pod.get("status", {}).get("phase") == "Running" for pod in pods)


def operator_log(cluster: ApiServer) -> str:
    """The operator's output so far (kubectl logs), for a failure's message."""
    return cluster.kubectl("-n", NAMESPACE, "logs", "deployment/tandem-operator", "--tail=40").stdout


def ready_and_restarts(pod: dict) -> tuple[bool, int]:
    """Whether the pod's agent is Ready (its probe: `tandem ctl status`), and how often its kubelet restarted it."""
    statuses = pod.get("status", {}).get("containerStatuses") or [{}]
    return bool(statuses[0].get("ready")), int(statuses[0].get("restartCount", 0))


def agent_pid(node: str) -> int:
    """The machine's PID of the agent in `node`'s pod (its container's first process: the agent's Python)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            environment = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if command[1:4] == [b"-m", b"controlplane", b"node"] and f"NODE_NAME={node}".encode() in environment:
            return int(entry.name)
    raise RuntimeError(f"no agent process of {node}")


@contextlib.contextmanager
def tandem_installed(
    cluster: ApiServer, hosts: tuple[NodeHost, ...], folder: Path, offers: str
) -> Iterator[dict[str, Control]]:
    """Tandem installed (the module's header) and an agent pod Ready on every node with its costs reported; yields
    node -> a client of its agent's control API. On every way out the DaemonSet is deleted and its pods waited for:
    each agent, stopped by its kubelet (SIGTERM), drains, undoes what it changed, and writes its results."""
    _kubectl(cluster, "create", "namespace", NAMESPACE)
    _kubectl(
        cluster, "-n", NAMESPACE, "create", "secret", "generic", "tandem-control-token", f"--from-literal=token={TOKEN}"
    )
    for host in hosts:
        _kubectl(cluster, "label", "node", host.node, "tandem.dev/node=true")
    try:
        _kubectl(cluster, "apply", "-k", str(overlay(folder, cluster, hosts, offers)))
        wait_for(
            lambda: all(ready_and_restarts(agent_pods(cluster).get(h.node, {}))[0] for h in hosts),
            "an agent pod Ready on each node",
            seconds=POD_READY_S,
        )
        wait_for(lambda: all(COSTS in node_annotations(cluster, h.node) for h in hosts), "every node's report")
        wait_for(lambda: operator_running(cluster), "the operator's pod running")
        yield {host.node: Control(tcp=(host.address, AGENT_PORT), token=TOKEN) for host in hosts}
    except Exception:
        print(f"tandem_daemonset: the operator's last words:\n{operator_log(cluster)}", flush=True)
        raise
    finally:
        cluster.kubectl("-n", NAMESPACE, "delete", "deployment", "tandem-operator", "--wait=false")
        cluster.kubectl("-n", NAMESPACE, "delete", "daemonset", "tandem-node", "--wait=false")
        wait_for(lambda: not agent_pods(cluster), "the agents' pods gone", seconds=150)
