"""The ServiceChain operator's Kubernetes side, on kopf: Node events keep the cluster's Tandem nodes, a ServiceChain's
creation, spec change or the operator's start place it, a timer writes its hops' rates and moves it off a lost node,
and its deletion removes it from the agents (kopf's finalizer holds the resource until then)."""

from __future__ import annotations

import dataclasses
import logging
import threading

import kopf

from controlplane.errors import SetupError
from controlplane.kubernetes.api_client import in_cluster_url
from controlplane.kubernetes.crd import GROUP, PLURAL, VERSION
from controlplane.kubernetes.reconciler import Reconciler
from controlplane.kubernetes.tandem_nodes import NodeReportError, is_tandem_node, tandem_node

STATUS_INTERVAL_S = 2.0  # how often each ServiceChain's nodes are checked (an agent answers once for all on it)
PREFIX = "tandem.dev"

# One per operator process, made by run(): kopf's handlers are module functions.
reconciler = Reconciler(token=None)


@kopf.on.startup(id="settings")
def _settings(settings: kopf.OperatorSettings, **_) -> None:
    settings.persistence.finalizer = f"{PREFIX}/operator"
    # kopf keeps its own progress in annotations: the CRD's status schema has no room for it (it would be pruned).
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=PREFIX)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=PREFIX)
    settings.posting.level = logging.WARNING
    settings.execution.max_workers = 8


@kopf.on.login(id="login")
def _login(**kwargs):
    """In a pod, its service account, at the API server's address as the kubelet gives it to every container
    ($KUBERNETES_SERVICE_HOST and _PORT, as client-go and the node agent read it: kopf's own names
    kubernetes.default.svc, which only the cluster's DNS resolves); elsewhere, the kubeconfig ($KUBECONFIG,
    ~/.kube/config)."""
    account, url = kopf.login_with_service_account(**kwargs), in_cluster_url()
    if account is not None and url is not None:
        return dataclasses.replace(account, server=url)
    return account or kopf.login_with_kubeconfig(**kwargs)


@kopf.on.event("", "v1", "nodes", id="nodes")
def _node(event, body, logger, **_) -> None:
    name = body["metadata"]["name"]
    if event["type"] == "DELETED" or not is_tandem_node(body):
        reconciler.node_seen(name, None)
        return
    try:
        reconciler.node_seen(name, tandem_node(body))
    except NodeReportError as error:
        logger.warning(str(error))
        reconciler.node_seen(name, None)


# Handler ids name kopf's progress annotations (tandem.dev/ID), which must start with a letter.
@kopf.on.resume(GROUP, VERSION, PLURAL, id="resume")
@kopf.on.create(GROUP, VERSION, PLURAL, id="create")
@kopf.on.update(GROUP, VERSION, PLURAL, field="spec", id="update")
def _place(name, namespace, spec, meta, status, patch, reason, **_) -> None:
    key = f"{namespace}/{name}"
    if reason == "resume":  # the operator started again: what an earlier one added is removed, then placed anew
        reconciler.forget_earlier(name, [entry.get("node") for entry in (status or {}).get("placement", [])])
    # One try here; one that could not be placed yet is tried again by the timer (its status says why meanwhile).
    _place_again(key, name, spec, meta, status, patch)


@kopf.timer(GROUP, VERSION, PLURAL, id="status", interval=STATUS_INTERVAL_S, initial_delay=STATUS_INTERVAL_S)
def _watch(name, namespace, spec, meta, status, patch, logger, **_) -> None:
    key = f"{namespace}/{name}"
    if reconciler.due(key):
        _place_again(key, name, spec, meta, status, patch)
        return
    if key not in reconciler.held:
        return
    lost = reconciler.lost_nodes(key)
    if lost:
        reconciler.mark_lost(key, lost)
        message = _place_again(key, name, spec, meta, status, patch, f"node {', '.join(lost)} lost; ")
        logger.warning(f"ServiceChain {key}: {message}")
        return
    if not reconciler.plan_only and reconciler.hops_due(key):
        patch.status["hops"] = reconciler.hops(key, name)


def _place_again(key: str, name: str, spec, meta, status, patch, why: str = "") -> str:
    """Places the resource (again) and patches its status with the outcome, its condition's message after `why`;
    returns that message."""
    outcome = reconciler.apply(key, name, _plain(spec), meta.get("generation"))
    condition = outcome.status["conditions"][0]
    condition["message"] = why + condition["message"]
    patch.status.update(_kept_times(outcome.status, status))
    return condition["message"]


def _kept_times(new: dict, old) -> dict:
    """A condition keeps its lastTransitionTime while its status stays the same (Kubernetes' convention)."""
    before = {c.get("type"): c for c in ((old or {}).get("conditions") or [])}
    for condition in new.get("conditions", []):
        earlier = before.get(condition["type"])
        if earlier and earlier.get("status") == condition["status"] and earlier.get("lastTransitionTime"):
            condition["lastTransitionTime"] = earlier["lastTransitionTime"]
    return new


@kopf.on.delete(GROUP, VERSION, PLURAL, id="remove")
def _remove(name, namespace, **_) -> None:
    left = reconciler.deleted(f"{namespace}/{name}")
    if left:
        raise kopf.PermanentError(f"could not remove from their agents: {'; '.join(left)}")


def _plain(value):
    """kopf's views of a resource as plain dicts and lists, as pydantic reads them."""
    if hasattr(value, "items"):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def run(
    token: str | None,
    time_limit_s: float,
    namespace: str | None,
    plan_only: bool = False,
    stop: threading.Event | None = None,
) -> None:
    """Runs the operator until stopped (SIGINT, SIGTERM, or `stop`): one replica (standalone, no peering)."""
    reconciler.token, reconciler.time_limit_s, reconciler.plan_only = token, time_limit_s, plan_only
    kopf.configure(verbose=False)
    try:
        kopf.run(
            standalone=True,
            clusterwide=namespace is None,
            namespaces=[namespace] if namespace else (),
            stop_flag=stop,
        )
    except kopf.LoginError as error:
        raise SetupError(f"cannot log in to the cluster: {error} (give --kubeconfig, or run in a pod)") from None
