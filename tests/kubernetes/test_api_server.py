"""The ServiceChain CRD and Tandem's manifests on a real Kubernetes API server (etcd and kube-apiserver,
bench/kubernetes_cluster.py): the server takes the CRD (it refuses one whose schema is not structural) and every
manifest of the kustomization (operator, node agents, their RBAC), accepts every example resource, and refuses a bad
one naming the field, as a user applying it with kubectl sees."""

from __future__ import annotations

import json

import pytest
import yaml

from bench.kubernetes_cluster import api_server_with_the_crd
from conftest import REPO
from controlplane.kubernetes.service_chain import ServiceChainStatus

DEPLOY = REPO / "deploy" / "kubernetes"
EXAMPLES = sorted((DEPLOY / "examples").glob("*.yaml"))


@pytest.fixture(scope="module")
def cluster():
    with api_server_with_the_crd() as server:
        yield server


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_the_api_server_accepts_every_example(cluster, example):
    applied = cluster.kubectl("apply", "--dry-run=server", "-f", str(example))
    assert applied.returncode == 0, applied.stderr


def test_a_resource_is_stored_and_read_back_as_written(cluster):
    example = REPO / "deploy/kubernetes/examples/firewall-chain.yaml"
    assert cluster.kubectl("apply", "-f", str(example)).returncode == 0
    stored = yaml.safe_load(cluster.kubectl("get", "servicechain", "firewall-chain", "-o", "yaml").stdout)
    assert stored["spec"] == yaml.safe_load(example.read_text())["spec"]  # nothing pruned, nothing defaulted
    assert cluster.kubectl("delete", "servicechain", "firewall-chain").returncode == 0


def patch_status(cluster, name: str, status: dict):
    """What the operator does: the status written through its subresource, the spec left alone."""
    document = json.dumps({"status": status})
    return cluster.kubectl("patch", "servicechain", name, "--subresource=status", "--type=merge", "-p", document)


def test_the_status_the_models_describe_is_stored_through_the_status_subresource(cluster):
    status = {
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Placed", "lastTransitionTime": "2026-11-27T00:00:00Z"}
        ],
        "placement": [{"nf": "fw", "node": "node-a", "core": 1}, {"nf": "count", "node": "node-b", "core": 1}],
        "hops": [{"from": "fw", "to": "count", "node": "wire", "rateMpps": 1.0, "dropped": 0, "latencyP99Us": 41.5}],
    }
    ServiceChainStatus.model_validate(status)
    example = REPO / "deploy/kubernetes/examples/firewall-chain.yaml"
    assert cluster.kubectl("apply", "-f", str(example)).returncode == 0
    patched = patch_status(cluster, "firewall-chain", status)
    assert patched.returncode == 0, patched.stderr
    stored = yaml.safe_load(cluster.kubectl("get", "servicechain", "firewall-chain", "-o", "yaml").stdout)
    assert stored["status"] == status
    assert "True" in cluster.kubectl("get", "servicechain", "firewall-chain").stdout  # the Ready column
    status["hops"][0]["dropped"] = -1  # refused: what the models refuse, the schema refuses
    patched = patch_status(cluster, "firewall-chain", status)
    assert patched.returncode != 0 and "status.hops[0].dropped" in patched.stderr, patched.stderr
    assert cluster.kubectl("delete", "servicechain", "firewall-chain").returncode == 0


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda r: r["spec"].update(placement="cheapest"), 'spec.placement: Unsupported value: "cheapest"'),
        (lambda r: r["spec"]["chains"][0]["nfs"][0].update(name="no spaces"), "spec.chains[0].nfs[0].name: Invalid"),
        (lambda r: r["spec"]["chains"][0]["nfs"][1].update(core=-1), "spec.chains[0].nfs[1].core: Invalid"),
        (lambda r: r["spec"]["chains"][0].update(colour="red"), 'unknown field "spec.chains[0].colour"'),
        (lambda r: r["spec"].update(chains=[]), "spec.chains: Invalid value"),
    ],
)
def test_the_api_server_refuses_a_bad_resource_naming_the_field(cluster, change, says):
    resource = yaml.safe_load((REPO / "deploy/kubernetes/examples/firewall-chain.yaml").read_text())
    change(resource)
    applied = cluster.kubectl("apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(resource))
    assert applied.returncode != 0
    assert says in applied.stderr, applied.stderr


def test_the_kustomization_installs_every_manifest_and_the_api_server_accepts_them(cluster):
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    manifests = {path.relative_to(DEPLOY).as_posix() for path in DEPLOY.rglob("*.yaml")}
    manifests -= {"kustomization.yaml"} | {path.relative_to(DEPLOY).as_posix() for path in EXAMPLES}
    assert set(kustomization["resources"]) == manifests  # none forgotten, none missing
    built = cluster.kubectl("kustomize", str(DEPLOY))
    assert built.returncode == 0, built.stderr
    objects = list(yaml.safe_load_all(built.stdout))
    kinds = {(item["kind"], item["metadata"]["name"]) for item in objects}
    assert {("DaemonSet", "tandem-node"), ("Deployment", "tandem-operator")} <= kinds
    # Every container runs Tandem's image, pinned by the kustomization; the node agent is a Guaranteed pod.
    pods = [item["spec"]["template"]["spec"] for item in objects if item["kind"] in ("DaemonSet", "Deployment")]
    assert {container["image"] for pod in pods for container in pod["containers"]} == {"localhost/tandem:dev"}
    [agent] = [item for item in objects if item["kind"] == "DaemonSet"]
    resources = agent["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"] == resources["limits"] and float(resources["limits"]["cpu"]).is_integer()
    assert cluster.kubectl("apply", "-f", str(DEPLOY / "namespace.yaml")).returncode == 0  # dry runs need it
    applied = cluster.kubectl("apply", "--dry-run=server", "-k", str(DEPLOY))
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.count("(server dry run)") == len(objects), applied.stdout
