"""How fast the ServiceChain operator notices a node's agent gone and puts the chain back, on a real API server with
a real agent (`./tandem node`, root): the agent stops (as a node's agent ends when its pod is killed), the operator
finds the node lost, the agent starts again (as its DaemonSet starts it again), and the operator adds the chain
once more. Each round measures: the agent stopped to the operator saying the node is lost; the agent answering
again to the chain's traffic flowing; the heal the operator reports (healSeconds: node found lost to the chain
running again, the agent's own restart included). This host has one NF core, so the chain cannot move to a second
node here: that heal is not measured.

Usage: .venv/bin/python bench/operator_heal.py [--rounds 5]
Writes bench/results/operator-heal.{json.gz,md}."""

from __future__ import annotations

import argparse
import json
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
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

CHAIN = json.dumps(cluster_support.service_chain("edge", "50 kpps", cluster_support.FIREWALL_AND_COUNTER))


def condition(cluster) -> dict:
    found = cluster.kubectl("get", "servicechain", "edge", "-o", "json")
    status = json.loads(found.stdout).get("status") or {} if found.returncode == 0 else {}
    return {**((status.get("conditions") or [{}])[0]), "healSeconds": status.get("healSeconds")}


def delivering(control) -> bool:
    try:
        return any(c.name == "edge.web" and c.delivered > 0 and not c.removed for c in control.status().chains)
    except Exception:  # noqa: BLE001 - the agent is between lives
        return False


def measure(rounds: int) -> list[dict]:
    results = []
    with cluster_support.api_server_with_the_crd() as cluster, tempfile.TemporaryDirectory() as scratch:
        folder, port = Path(scratch), free_port()
        cluster_support.add_ready_node(cluster, "node-a")
        with cluster_support.operator(cluster, folder, "--time-limit", "5") as running:
            for round_number in range(rounds + 1):
                with cluster_support.node_agent(
                    cluster,
                    folder,
                    "node-a",
                    port,
                    cluster_support.AGENT_SPEC,
                    cluster_support.AGENT_OFFERS,
                    f"agent{round_number}",
                ) as (
                    process,
                    control,
                    _,
                ):
                    back = time.monotonic()
                    if round_number == 0:
                        cluster.kubectl("apply", "-f", "-", stdin=CHAIN)
                    cluster_support.wait_for(
                        lambda control=control: delivering(control), "the chain's traffic", running
                    )
                    flowing_s = time.monotonic() - back
                    healed = cluster_support.wait_for(
                        lambda: condition(cluster).get("status") == "True" and condition(cluster), "Ready"
                    )
                    if round_number:
                        results[-1] |= {"back_to_traffic_s": flowing_s, "heal_s": healed["healSeconds"]}
                        print(f"round {round_number}: {results[-1]}", flush=True)
                    stopped = time.monotonic()
                    control.stop()
                    process.wait(timeout=120)
                cluster_support.wait_for(
                    lambda: "node-a lost" in condition(cluster).get("message", ""), "the node found lost", running
                )
                results.append({"lost_found_s": time.monotonic() - stopped})
    return results[:-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rounds = measure(args.rounds)
    machine = machine_description()

    def median(key: str) -> str:
        values = [r[key] for r in rounds if r.get(key) is not None]
        return f"{statistics.median(values):.2f} s (max {max(values):.2f} s)" if values else "-"

    rows = [
        ["agent stopped -> the operator says the node is lost", median("lost_found_s")],
        ["agent answering again -> the chain's traffic flows", median("back_to_traffic_s")],
        ["healSeconds (node found lost -> running again)", median("heal_s")],
    ]
    text = f"a node's agent lost and back, median of {len(rounds)} rounds ({machine}):\n" + table(["", ""], rows)
    save_result("operator-heal", {"machine": machine, "rounds": rounds}, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
