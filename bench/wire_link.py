"""A chain across two nodes over a wire, measured by its real clients and checked by the kernel: a lab client on
node A sends through node A's chain, a VXLAN and node B's chain to its server (bench/two_nodes.py: two network
namespaces on this machine), with nftables dropping 0 % and then 1 % of the VXLAN datagrams each way. Each round
records iperf3's goodput and retransmits, and for each way of the wire what left, what came in, what the receiving
port found lost (gaps in the numbers) beside what nftables counted as dropped, and the one-way delay.

Usage: .venv/bin/python bench/wire_link.py [--rounds 3]   (root)
Writes bench/results/wire-link.{json.gz,md}."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.experiment_support import save_result  # noqa: E402
from bench.two_nodes import NODE_A, NODE_B, dropped_by_nftables, two_nodes, wire_spec  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.results.wire_balance import wire_balance  # noqa: E402
from controlplane.terminal.tables import count, table  # noqa: E402

LOSSES = (0, 1)  # percent of the VXLAN datagrams nftables drops, each way
IPERF3_SECONDS = 3


def one_round(loss_percent: int, folder: Path) -> dict:
    spec, out = folder / "wire.yaml", folder / "results.json"
    spec.write_text(wire_spec(IPERF3_SECONDS))
    out.unlink(missing_ok=True)
    with two_nodes(loss_percent):
        run = subprocess.run(
            [str(HERE.parent / "tandem"), "run", str(spec), "--json", str(out), "--quiet"],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        if run.returncode != 0:
            raise SystemExit(f"wire-link: the run failed:\n{run.stderr}")
        dropped = {node.vxlan: dropped_by_nftables(node) for node in (NODE_A, NODE_B)}
    results = json.loads(out.read_text())
    ports = {port["name"]: port for port in results["ports"]}
    iperf3 = next(r["figures"] for r in results["lab"] if r["command"].startswith("iperf3 --client"))
    ways = {}
    for sender, receiver, node in (("east", "west", NODE_A), ("west", "east", NODE_B)):
        balance = wire_balance(ports[sender], ports[receiver])
        delay = ports[receiver]["wire"]["delay"]
        ways[f"{sender} -> {receiver}"] = balance | {
            "dropped_by_nftables": dropped[node.vxlan],
            "delay_mean_us": delay["mean_ns"] / 1e3 if delay else None,
        }
    return {
        "loss_percent": loss_percent,
        "goodput_gbps": iperf3["goodput_bps"] / 1e9,
        "retransmits": iperf3.get("retransmits"),
        "accounting_exact": results["accounting"]["exact"],
        "ways": ways,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory() as scratch:
        for number in range(args.rounds):
            for loss in LOSSES:  # interleaved, so that a slow spell of the machine hits both alike
                rounds.append(one_round(loss, Path(scratch)))
                print(f"round {number + 1}, loss {loss} %: {rounds[-1]}", file=sys.stderr, flush=True)
    rows = []
    for loss in LOSSES:
        mine = [r for r in rounds if r["loss_percent"] == loss]
        goodput = statistics.median(r["goodput_gbps"] for r in mine)
        retransmits = statistics.median(r["retransmits"] for r in mine)
        for way in mine[0]["ways"]:
            each = [r["ways"][way] for r in mine]
            agreed = sum(w["lost"] <= w["dropped_by_nftables"] <= w["lost"] + w["after_last"] for w in each)
            rows.append([
                f"{loss} %", f"{goodput:.2f}", f"{retransmits:.0f}", way,
                count(statistics.median(w["sent"] for w in each)),
                count(sum(w["lost"] for w in each)), count(sum(w["dropped_by_nftables"] for w in each)),
                f"{agreed}/{len(each)}", "yes" if all(w["exact"] for w in each) else "NO",
                f"{statistics.median(w['delay_mean_us'] for w in each):.0f}",
            ])  # fmt: skip
    machine = machine_description()
    headers = ["loss", "iperf3 Gbit/s", "retransmits", "way", "sent", "lost (gaps)", "nftables dropped", "agree",
               "balances", "one-way us"]  # fmt: skip
    text = (
        f"a chain across two nodes over a VXLAN wire, iperf3 for {IPERF3_SECONDS} s, median of {args.rounds} rounds "
        f"(lost and dropped: summed over the rounds; agree: rounds where the gaps the port found are what nftables "
        f"dropped; {machine}):\n" + table(headers, rows)
    )
    save_result("wire-link", {"machine": machine, "rounds": rounds}, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
