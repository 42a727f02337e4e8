"""The ServiceChain operator at cluster scale, on a real API server: kwok's fake nodes (made Ready and kept so by
heartbeats, as kubelets keep theirs), each reporting 16 Tandem cores, its TSC rate and its NF costs, and thousands
of ServiceChains created at once; the operator (`./tandem operator --plan-only`: no agent stands behind a fake node)
places each on whole free cores.

Instances: chains of 3 NFs (a firewall, a counter, a TTL decrementer), each chain's rate 0.2..3 Mpps; each node its
own TSC rate (2..3 GHz) and costs (k = 50..400 cycles a packet, c = 200..2,000 a batch, the range of this catalog's
measured profiles, drawn per node and NF type). Measured: the time from the first resource created to every one
placed, each placement's own time (the operator's condition says it), the API calls the operator made (the API
server's own request counters; the benchmark itself never patches), and the cores the chains hold against one core
per NF, which is what Kubernetes' CPU manager (static policy) gives poll-mode NFs.

Usage: .venv/bin/python bench/operator_scale.py [--nodes 500] [--chains 2000] [--seed 1]
Writes bench/results/operator-scale.{json.gz,md,png}."""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bench.experiment_support import save_result  # noqa: E402
from bench.kubernetes_cluster import api_server_with_the_crd, operator, service_chain  # noqa: E402
from controlplane.kubernetes.tandem_nodes import annotations  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

RESULTS = HERE / "results"
NODE_CORES = 16
TYPES = (("fw", "firewall", {"synthetic_rules": 100}), ("count", "counter", {}), ("ttl", "ttl", {}))
BATCH = 200  # resources per kubectl call
TIME_LIMIT_S = 60 * 60  # the whole run's bound: the benchmark stops by itself
PLACED_IN = re.compile(r" in ([0-9.]+) s")
REQUESTS = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<count>[0-9.e+]+)$", re.M)


def fake_nodes(rng: random.Random, count: int) -> list[dict]:
    nodes = []
    for n in range(count):
        costs = [
            {"type": kind, "args": args, "k_cycles": rng.uniform(50, 400), "c_cycles": rng.uniform(200, 2000)}
            for _, kind, args in TYPES
        ]
        cores = list(range(1, NODE_CORES + 1))
        notes = annotations(f"198.18.{n // 250}.{n % 250 + 1}:7100", cores, rng.uniform(2e9, 3e9), costs)
        nodes.append({"name": f"node-{n:04d}", "annotations": notes})
    return nodes


def service_chains(rng: random.Random, count: int) -> list[dict]:
    nfs = [{"name": name, "type": kind, "args": args} for name, kind, args in TYPES]
    return [service_chain(f"chain-{c:05d}", f"{rng.uniform(0.2, 3.0):.3f} Mpps", nfs) for c in range(count)]


def requests_by(cluster, resource: str) -> dict[str, float]:
    """The API server's request counts for `resource`, by verb (subresources such as status included)."""
    counts: dict[str, float] = {}
    for found in REQUESTS.finditer(cluster.kubectl("get", "--raw", "/metrics").stdout):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', found["labels"]))
        if labels.get("resource") == resource:
            counts[labels["verb"]] = counts.get(labels["verb"], 0) + float(found["count"])
    return counts


def statuses(cluster) -> dict[str, dict]:
    listed = cluster.kubectl("get", "servicechains", "-o", "json")
    return {item["metadata"]["name"]: item.get("status") or {} for item in json.loads(listed.stdout)["items"]}


def measure(nodes: int, chains: int, seed: int) -> dict:
    rng = random.Random(seed)
    with api_server_with_the_crd() as cluster, tempfile.TemporaryDirectory() as scratch:
        cluster.start_kwok()
        began = time.monotonic()
        cluster.add_fake_nodes(fake_nodes(rng, nodes), NODE_CORES + 1)
        print(f"{nodes} nodes Ready in {time.monotonic() - began:.0f} s", flush=True)
        with operator(cluster, Path(scratch), "--plan-only", "--time-limit", "5") as running:
            time.sleep(5)  # the operator's watches listed every node
            before = requests_by(cluster, "servicechains")
            resources = service_chains(rng, chains)
            began = time.monotonic()
            for first in range(0, chains, BATCH):
                batch = {"apiVersion": "v1", "kind": "List", "items": resources[first : first + BATCH]}
                created = cluster.kubectl("create", "-f", "-", stdin=json.dumps(batch))
                if created.returncode != 0:
                    raise RuntimeError(f"creating ServiceChains: {created.stderr[-500:]}")
            created_s = time.monotonic() - began
            timeline = []
            while time.monotonic() - began < TIME_LIMIT_S:
                found = statuses(cluster)
                done = {name: s for name, s in found.items() if s.get("conditions")}
                timeline.append([time.monotonic() - began, len(done)])
                print(f"  {timeline[-1][0]:.0f} s: {len(done)} of {chains} placed", flush=True)
                if len(done) == chains:
                    break
                if running.poll() is not None:
                    raise RuntimeError("the operator ended: " + running.log.read_text()[-2000:])
                time.sleep(2)
            else:
                raise RuntimeError(f"not every ServiceChain placed in {TIME_LIMIT_S} s")
            all_placed_s = timeline[-1][0]
            time.sleep(10)  # what the operator writes after its first answers (timers) counts too
            after = requests_by(cluster, "servicechains")
    reasons = [s["conditions"][0]["reason"] for s in done.values()]
    seconds = [float(m[1]) for s in done.values() if (m := PLACED_IN.search(s["conditions"][0]["message"]))]
    held = {(p["node"], p["core"]) for s in done.values() for p in s.get("placement", [])}
    return {
        "nodes": nodes,
        "node_cores": NODE_CORES,
        "chains": chains,
        "nfs": chains * len(TYPES),
        "seed": seed,
        "created_s": created_s,
        "all_placed_s": all_placed_s,
        "placement_s": seconds,
        "reasons": {reason: reasons.count(reason) for reason in sorted(set(reasons))},
        "cores_held": len(held),
        "nodes_used": len({node for node, _ in held}),
        "operator_requests": {verb: after.get(verb, 0) - before.get(verb, 0) for verb in sorted(after)},
        "timeline": timeline,
    }


def text_of(entry: dict, machine: str) -> str:
    seconds = sorted(entry["placement_s"])
    p95 = seconds[int(0.95 * (len(seconds) - 1))] if seconds else float("nan")
    patches = entry["operator_requests"].get("PATCH", 0)
    planned = entry["reasons"].get("Planned", 0)
    rows = [
        ["fake nodes (kwok) x Tandem cores", f"{entry['nodes']} x {entry['node_cores']}"],
        ["ServiceChains (3 NFs each)", f"{entry['chains']} ({planned} placed, {entry['chains'] - planned} not)"],
        ["created in", f"{entry['created_s']:.0f} s"],
        [
            "every one placed after",
            f"{entry['all_placed_s']:.0f} s ({entry['chains'] / entry['all_placed_s']:.1f} a second)",
        ],
        [
            "one placement (median, p95, max)",
            f"{statistics.median(seconds):.3f} s, {p95:.3f} s, {seconds[-1]:.3f} s" if seconds else "-",
        ],
        ["operator's PATCH calls per ServiceChain", f"{patches / entry['chains']:.2f}"],
        ["cores held", f"{entry['cores_held']} on {entry['nodes_used']} nodes"],
        ["one core per NF (the CPU manager)", f"{entry['nfs']} ({entry['nfs'] / entry['cores_held']:.1f}x as many)"],
    ]
    return f"the operator at scale (plan only), seed {entry['seed']} ({machine}):\n" + table(["", ""], rows)


def plot(entry: dict, path: Path) -> None:
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    times, placed = zip(*entry["timeline"], strict=True)
    left.plot(times, placed, marker=".")
    left.set_xlabel("seconds since the first ServiceChain was created")
    left.set_title(f"ServiceChains placed ({entry['chains']} on {entry['nodes']} fake nodes)")
    right.hist(entry["placement_s"], bins=40)
    right.set_xlabel("seconds")
    right.set_title("one placement's time")
    for axis in (left, right):
        axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--chains", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    entry = measure(args.nodes, args.chains, args.seed)
    machine = machine_description()
    RESULTS.mkdir(exist_ok=True)
    plot(entry, RESULTS / "operator-scale.png")
    save_result("operator-scale", {"machine": machine, **entry}, text_of(entry, machine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
