"""A cluster node's Tandem agent (`./tandem node`): the NF costs it measures before serving, and the report on its
Node (control address, NF cores, TSC rate, costs) that it writes once its service answers and takes off when it
stops, so that the operator never places a chain on an agent that is not there."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from controlplane.errors import SetupError, SpecError
from controlplane.kubernetes.api_client import ApiServer
from controlplane.kubernetes.tandem_nodes import CONTROL
from controlplane.launch.control_client import Control
from controlplane.planning.batch_model import batch_models
from controlplane.spec import catalog
from controlplane.spec.deployment import run_config
from controlplane.spec.loading import parse_yaml, read_text, spec_from_document
from controlplane.spec.models import Spec

START_TIMEOUT_S = 600.0  # the service measures what its scheduler needs before it answers


def nfs_to_measure(path: str | None) -> list[dict]:
    """The NF types (with their args) a node offers beyond its spec's: a YAML list of {type, args}."""
    if path is None:
        return []
    listed = parse_yaml(read_text(Path(path), path), path)
    if not isinstance(listed, list):
        raise SpecError(path, [("", "a list of NFs to measure, each {type: TYPE, args: {...}}")])
    nfs = []
    for i, entry in enumerate(listed):
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise SpecError(path, [(f"[{i}]", "give the NF's type (and its args, a mapping)")])
        if not isinstance(entry.get("args", {}), dict) or set(entry) - {"type", "args"}:
            raise SpecError(path, [(f"[{i}]", "only type and args (a mapping)")])
        nfs.append({"type": entry["type"], "args": entry.get("args", {})})
    return nfs


def on_own_cores(spec: Spec) -> Spec:
    """The spec on the CPUs this agent may run on (in a pod: the exclusive CPUs the kubelet's static CPU policy
    gave it), the first its control core and the others its NF cores, where the spec names neither itself."""
    if {"control_core", "placement_cores"} & spec.model_fields_set:
        return spec
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SetupError(f"the agent may run on CPU {cpus[0]} only: it needs a control core and an NF core at least")
    return spec.model_copy(update={"control_core": cpus[0], "placement_cores": cpus[1:]})


def measured_models(spec: Spec, source: str, extra: list[dict], say=None) -> tuple[list[int], float, list[dict]]:
    """The service's NF cores, this machine's TSC rate, and the batch-time model of every NF type (with its args)
    of the spec and of `extra`, each measured alone on an NF core (cached, as `./tandem place` measures them)."""
    config = run_config(spec)
    cores = config["placement_cores"]
    kinds: dict[str, dict] = {}
    for nf in [nf for chain in config["chains"] for nf in chain["nfs"]] + extra:
        kinds.setdefault(repr((nf["type"], sorted(nf.get("args", {}).items()))), nf)
    chains = [
        {
            "name": f"cost{i}",
            "nfs": [{"name": f"nf{i}", "type": nf["type"], "args": nf.get("args", {}), "core": cores[0]}],
        }
        for i, nf in enumerate(kinds.values())
    ]
    document = {"name": "node-costs", "control_core": spec.control_core, "placement_cores": cores, "chains": chains}
    measuring = run_config(spec_from_document(document, source))
    catalog.check(measuring, source)  # a wrong type or argument named before anything runs
    models = batch_models(measuring, source, say=say)
    reported = [
        {"type": nf["type"], "args": nf["args"], "k_cycles": model["k_cycles"], "c_cycles": model["c_cycles"]}
        for chain in measuring["chains"]
        for nf in chain["nfs"]
        for model in [models[nf["name"]]]
    ]
    return cores, float(next(iter(models.values()))["tsc_hz"]), reported


class NodeReport:
    """Writes the agent's report on its Node once the service answers on `socket`; withdraw() takes it off."""

    def __init__(self, api: ApiServer, node: str, socket: Path, notes: dict[str, str], say=None):
        self.api, self.node, self.socket, self.notes, self.say = api, node, socket, notes, say
        self.written = False
        self.error: SetupError | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._report, name="node-report", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _report(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.done.is_set() and time.monotonic() < deadline:
            try:
                Control(self.socket, timeout=5).status()
                break
            except SetupError:
                self.done.wait(0.5)
        else:
            return
        try:
            self.api.patch_merge(f"/api/v1/nodes/{self.node}", {"metadata": {"annotations": self.notes}})
            self.written = True
            if self.say:
                self.say(f"node {self.node}: reported to the cluster (control API at {self.notes[CONTROL]})")
        except SetupError as error:
            self.error = error
            if self.say:
                self.say(f"node {self.node}: could not report to the cluster: {error}")

    def withdraw(self) -> None:
        """Takes the report off the Node (the operator then treats the node as gone), whatever became of it."""
        self.done.set()
        self.thread.join(timeout=15)
        if self.written:
            self.api.patch_merge(f"/api/v1/nodes/{self.node}", {"metadata": {"annotations": dict.fromkeys(self.notes)}})
