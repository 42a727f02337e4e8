"""Tandem on a real cluster (two kubelet nodes on this machine, the tandem-node DaemonSet's pods running the Tandem
image: bench/kubelet_nodes.py, bench/tandem_daemonset.py): a ServiceChain of four NFs, each taking 40 % of a core
(by the agents' own measured costs), cut across the two nodes; then, round after round, one node's agent killed in
its pod (SIGKILL, as an out-of-memory kill or a crash would end it), the nodes in turn, each round in a fresh pod (a
container killed again within 10 minutes waits out its kubelet's back-off, 10 s and more, before it starts). Each
round measures, from the kill: its kubelet starting it again; the agent answering on its control API (it read its
NFs' costs from its cache, started its own chain, serves); the operator running the chain's part there again; the
chain's packets flowing out of its last node again. And the cores the chain holds against one core per NF (what
the CPU manager's static policy gives a pod per NF).

Usage: .venv/bin/python bench/kubelet_heal.py [--rounds 5]   (root)
Writes bench/results/kubelet-heal.{json.gz,md}."""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import kubernetes_cluster as cluster_support  # noqa: E402
from bench import tandem_daemonset as daemonset  # noqa: E402
from bench.experiment_support import save_result  # noqa: E402
from bench.kubelet_nodes import kubelet_nodes  # noqa: E402
from bench.kubernetes_cluster import wait_for  # noqa: E402
from bench.node_hosts import MACHINE_ADDRESS, node_hosts  # noqa: E402
from bench.node_rates import packet_seconds, rate_between  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

COST = {"type": "cost", "args": {"cycles": 20_000}}
NFS = 4  # at a rate where two fit a node's NF core and four do not, on either node by its own measured costs


def status(cluster) -> dict:
    got = cluster.kubectl("get", "servicechain", "edge", "-o", "json")
    return (json.loads(got.stdout).get("status") or {}) if got.returncode == 0 else {}


def running_across_both(cluster) -> dict[str, str] | None:
    """Where the chain's NFs run, once it is Ready on both nodes."""
    found = status(cluster)
    if (found.get("conditions") or [{}])[0].get("status") != "True":
        return None
    placed = {entry["nf"]: entry["node"] for entry in found.get("placement") or []}
    return placed if len(set(placed.values())) == 2 else None


def answers(control) -> bool:
    """Whether the agent serves its control API (its pod's Ready follows, at its probe's next look: every 10 s)."""
    try:
        control.status()
    except Exception:  # noqa: BLE001 - not yet
        return False
    return True


def parts(control) -> dict[str, int]:
    """The chain's parts the agent runs (every life of it, its name tells which), each with what it delivered; none
    while the agent does not answer."""
    try:
        chains = control.status().chains
    except Exception:  # noqa: BLE001 - between two lives
        return {}
    return {c.name: c.delivered for c in chains if c.name.startswith("edge") and not c.removed}


def last_nf_node(placed: dict[str, str]) -> str:
    return placed[f"nf{NFS}"]


def fresh_pod(cluster, controls: dict, node: str) -> None:
    """`node`'s agent in a pod whose container was never restarted, and the chain running across both nodes: a pod
    whose agent was killed before is deleted (its agent drains and stops) and the DaemonSet's next one waited for."""
    pod = daemonset.agent_pods(cluster)[node]
    if daemonset.ready_and_restarts(pod)[1] == 0:
        return
    cluster.kubectl("-n", daemonset.NAMESPACE, "delete", "pod", pod["metadata"]["name"])
    wait_for(
        lambda: (p := daemonset.agent_pods(cluster).get(node)) and p["metadata"]["uid"] != pod["metadata"]["uid"] and p,
        f"{node}'s next pod",
    )
    wait_for(lambda: answers(controls[node]) and parts(controls[node]), f"the chain's part on {node}")
    last = last_nf_node(wait_for(lambda: running_across_both(cluster), "the chain across both nodes"))
    wait_for(lambda: any(parts(controls[last]).values()), "the chain's traffic")


def kill_and_heal(cluster, controls: dict, node: str) -> dict:
    """One round: `node`'s agent killed in its pod, and the times (s since the kill) until it is back, serving, runs
    its part of the chain again, and the chain's packets leave its last node again."""
    fresh_pod(cluster, controls, node)
    restarts = daemonset.ready_and_restarts(daemonset.agent_pods(cluster)[node])[1]
    before = {name: set(parts(control)) for name, control in controls.items()}
    killed = time.monotonic()
    os.kill(daemonset.agent_pid(node), signal.SIGKILL)
    times = {"node": node}
    wait_for(
        lambda: daemonset.ready_and_restarts(daemonset.agent_pods(cluster)[node])[1] > restarts,
        f"{node}'s agent started again",
    )
    times["restarted_s"] = time.monotonic() - killed
    wait_for(lambda: answers(controls[node]), f"{node}'s agent answering")
    times["answers_s"] = time.monotonic() - killed
    # The agent started again runs a part only once the operator placed the chain anew (under the names of the
    # chain's next life, on both nodes).
    wait_for(lambda: parts(controls[node]), f"the chain's part on {node} again")
    times["placed_s"] = time.monotonic() - killed
    last = last_nf_node(wait_for(lambda: running_across_both(cluster), "the chain across both again"))
    wait_for(
        lambda: any(d > 0 for name, d in parts(controls[last]).items() if name not in before[last]),
        "its packets out of its last node again",
    )
    times["traffic_s"] = time.monotonic() - killed
    return times


def measure(rounds: int) -> dict:
    results = []
    with (
        node_hosts() as hosts,
        cluster_support.api_server_with_the_crd(MACHINE_ADDRESS) as cluster,
        tempfile.TemporaryDirectory() as scratch,
    ):
        folder = Path(scratch)
        cluster.start_controllers()
        with (
            kubelet_nodes(cluster, hosts, daemonset.HUGEPAGES),
            daemonset.tandem_installed(cluster, hosts, folder, f"- {json.dumps(COST)}\n") as controls,
        ):
            rate = rate_between(cluster, fit=2, apart=4)
            share = rate * max(most for _, most in packet_seconds(cluster).values())
            nfs = [{"name": f"nf{i + 1}", **COST} for i in range(NFS)]
            chain = cluster_support.service_chain("edge", f"{rate} pps", nfs)
            cluster.kubectl("apply", "-f", "-", stdin=json.dumps(chain))
            placed = wait_for(lambda: running_across_both(cluster), "the chain across both nodes")
            wait_for(lambda: any(parts(controls[last_nf_node(placed)]).values()), "the chain's traffic")
            cores = {(entry["node"], entry["core"]) for entry in status(cluster)["placement"]}
            for round_number in range(rounds):
                results.append(kill_and_heal(cluster, controls, hosts[round_number % 2].node))
                print(f"round {round_number + 1}: {results[-1]}", flush=True)
            cluster.kubectl("delete", "servicechain", "edge")  # waits for the operator's finalizer: parts removed
        accounting = {
            host.node: json.loads((folder / "results" / f"{host.node}.json").read_text())["accounting"]["exact"]
            for host in hosts
        }
    return {
        "rounds": results,
        "cores": len(cores),
        "nfs": NFS,
        "share": round(share, 3),
        "accounting_exact": accounting,
    }


def report(document: dict, machine: str) -> str:
    rounds = document["rounds"]

    def median(key: str) -> str:
        values = [r[key] for r in rounds]
        return f"{statistics.median(values):.2f} s (max {max(values):.2f} s)"

    rows = [
        ["agent killed -> its kubelet starts it again", median("restarted_s")],
        ["-> it answers on its control API (measured, serving)", median("answers_s")],
        ["-> the operator added the chain's part on that node again", median("placed_s")],
        ["-> the chain's packets flow out of its last node", median("traffic_s")],
        [f"cores the chain holds ({document['nfs']} NFs at {document['share']:.0%} of a core)", str(document["cores"])],
        ["one core per NF (the CPU manager)", str(document["nfs"])],
    ]
    exact = "exact" if all(document["accounting_exact"].values()) else f"NOT exact: {document['accounting_exact']}"
    return (
        f"a chain cut across two kubelet nodes, one node's agent killed in its pod, median of {len(rounds)} rounds;"
        f" each agent's accounting {exact} ({machine}):\n" + table(["", ""], rows)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("kubelet_heal: needs root (kubelets, containerd, namespaces)", file=sys.stderr)
        return 2
    machine = machine_description()
    document = measure(args.rounds) | {"machine": machine}
    save_result("kubelet-heal", document, report(document, machine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
