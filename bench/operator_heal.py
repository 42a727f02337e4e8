"""How fast the ServiceChain operator moves a chain off a lost node, on a real API server with two real agents
(`./tandem node`, root; bench/node_hosts.py: two node hosts on one machine): the agent of the chain's node is killed
(SIGKILL, every process of it with it, as when its pod is killed), the operator finds the node lost and places the
chain on the other node; then the killed agent starts again (as its DaemonSet starts it) and the next round kills
the agent the chain moved to. Each round measures: the agent killed to the operator saying the node is lost; the
heal the operator reports (healSeconds: node found lost to the chain running on the other node); the agent killed
to the chain's traffic flowing on the other node.

Usage: .venv/bin/python bench/operator_heal.py [--rounds 5]
Writes bench/results/operator-heal.{json.gz,md}."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import kubernetes_cluster as cluster_support  # noqa: E402
from bench.experiment_support import save_result  # noqa: E402
from bench.local_ports import free_port  # noqa: E402
from bench.node_hosts import MACHINE_ADDRESS, node_hosts, signal_agent  # noqa: E402
from controlplane.kubernetes.tandem_nodes import CONTROL  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

CHAIN = json.dumps(cluster_support.service_chain("edge", "50 kpps", cluster_support.FIREWALL_AND_COUNTER))


def status(cluster) -> dict:
    found = cluster.kubectl("get", "servicechain", "edge", "-o", "json")
    return (json.loads(found.stdout).get("status") or {}) if found.returncode == 0 else {}


def condition(cluster) -> dict:
    return (status(cluster).get("conditions") or [{}])[0]


def node_of(cluster) -> str | None:
    placed = {entry["node"] for entry in status(cluster).get("placement") or []}
    return placed.pop() if len(placed) == 1 else None


def measure(rounds: int) -> list[dict]:
    results = []
    with (
        node_hosts() as hosts,
        cluster_support.api_server_with_the_crd(MACHINE_ADDRESS) as cluster,
        tempfile.TemporaryDirectory() as scratch,
        contextlib.ExitStack() as lives,
    ):
        folder = Path(scratch)
        by_node = {host.node: host for host in hosts}
        ports = {host.node: free_port() for host in hosts}
        agents: dict[str, tuple] = {}  # node -> (process, control, results) of its agent's present life
        started = dict.fromkeys(by_node, 0)

        def start(node: str) -> None:
            started[node] += 1
            agents[node] = lives.enter_context(
                cluster_support.host_agent(
                    cluster, folder, by_node[node], ports[node], cluster_support.AGENT_OFFERS, f"{node}-{started[node]}"
                )
            )
            cluster_support.wait_for(
                lambda: cluster_support.node_annotations(cluster, node).get(CONTROL), f"{node}'s report"
            )

        for host in hosts:
            cluster_support.add_ready_node(cluster, host.node)
        running = lives.enter_context(cluster_support.operator(cluster, folder, "--time-limit", "5"))
        for node in by_node:
            start(node)
        cluster.kubectl("apply", "-f", "-", stdin=CHAIN)
        on = cluster_support.wait_for(lambda: condition(cluster).get("status") == "True" and node_of(cluster), "Ready")
        cluster_support.wait_for(
            lambda: cluster_support.delivering(agents[on][1], "edge"), "the chain's traffic", running
        )
        for round_number in range(rounds):
            other = next(node for node in by_node if node != on)
            killed = time.monotonic()
            signal_agent(agents[on][0], signal.SIGKILL)
            agents[on][0].wait(timeout=60)
            cluster_support.wait_for(
                lambda on=on: f"{on} lost" in condition(cluster).get("message", ""), "the node found lost", running
            )
            lost_found_s = time.monotonic() - killed
            cluster_support.wait_for(
                lambda other=other: node_of(cluster) == other and cluster_support.delivering(agents[other][1], "edge"),
                "the chain's traffic on the other node",
                running,
            )
            moved_s = time.monotonic() - killed
            healed = cluster_support.wait_for(lambda: status(cluster).get("healSeconds"), "the heal time")
            results.append({"lost_found_s": lost_found_s, "heal_s": healed, "moved_s": moved_s})
            print(f"round {round_number + 1}: {on} -> {other}: {results[-1]}", flush=True)
            start(on)  # as its DaemonSet starts it again: it undoes what its killed life left
            on = other
        for process, control, _ in agents.values():
            control.stop()
            process.wait(timeout=120)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rounds = measure(args.rounds)
    machine = machine_description()

    def median(key: str) -> str:
        values = [r[key] for r in rounds]
        return f"{statistics.median(values):.2f} s (max {max(values):.2f} s)"

    rows = [
        ["agent killed -> the operator says the node is lost", median("lost_found_s")],
        ["healSeconds (node found lost -> running on the other node)", median("heal_s")],
        ["agent killed -> the chain's traffic flows on the other node", median("moved_s")],
    ]
    text = (
        f"a node's agent killed and its chain moved to the other node, median of {len(rounds)} rounds ({machine}):\n"
        + table(["", ""], rows)
    )
    save_result("operator-heal", {"machine": machine, "rounds": rounds}, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
