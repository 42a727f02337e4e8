"""The few Kubernetes API calls a node's agent makes (its Node's annotations), over HTTPS with a bearer token: in a
pod, its service account's; elsewhere, the kubeconfig's current user's. The operator uses kopf's own client."""

from __future__ import annotations

import base64
import json
import os
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import yaml

from controlplane.errors import SetupError

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ApiServer:
    url: str
    token: str
    context: ssl.SSLContext

    def patch_merge(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            method="PATCH",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/merge-patch+json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=self.context) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            said = error.read().decode(errors="replace")[:500]
            raise SetupError(f"the Kubernetes API refused PATCH {path}: {error.code} {said}") from None
        except (urllib.error.URLError, OSError) as error:
            raise SetupError(f"the Kubernetes API at {self.url} did not answer: {error}") from None


def in_cluster_url() -> str | None:
    """The API server's address as the kubelet gives it to every container ($KUBERNETES_SERVICE_HOST and _PORT, as
    client-go reads it: no cluster DNS needed); None outside a pod."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    return f"https://{f'[{host}]' if ':' in host else host}:{port}" if host else None


def connect(kubeconfig: str | None = None) -> ApiServer:
    """The API server of the pod this runs in, or of `kubeconfig` ($KUBECONFIG where not given)."""
    kubeconfig = kubeconfig or os.environ.get("KUBECONFIG")
    if not kubeconfig and (SERVICE_ACCOUNT / "token").exists():
        url = in_cluster_url()
        if url is None:
            raise SetupError("in a pod without KUBERNETES_SERVICE_HOST: cannot find the API server")
        context = ssl.create_default_context(cafile=str(SERVICE_ACCOUNT / "ca.crt"))
        return ApiServer(url, (SERVICE_ACCOUNT / "token").read_text().strip(), context)
    if not kubeconfig:
        raise SetupError("no cluster to report to: give --kubeconfig (or $KUBECONFIG), or run in a pod")
    return _from_kubeconfig(Path(kubeconfig))


def _from_kubeconfig(path: Path) -> ApiServer:
    try:
        config = yaml.safe_load(path.read_text())
        current = config["current-context"]
        context = next(c["context"] for c in config["contexts"] if c["name"] == current)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
    except (OSError, yaml.YAMLError, KeyError, StopIteration, TypeError) as error:
        raise SetupError(f"kubeconfig {path}: cannot read its current context ({error})") from None
    if "token" not in user:
        raise SetupError(f"kubeconfig {path}: its user has no token (the agent authenticates with a bearer token)")
    if cluster.get("insecure-skip-tls-verify"):
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    elif "certificate-authority" in cluster:
        tls = ssl.create_default_context(cafile=cluster["certificate-authority"])
    elif "certificate-authority-data" in cluster:
        tls = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    else:
        tls = ssl.create_default_context()
    return ApiServer(cluster["server"].rstrip("/"), user["token"], tls)
