"""A chain across two nodes over a wire, measured by its real clients and checked by the kernel: a lab client on
node A sends through node A's chain, a VXLAN and node B's chain to its server (bench/two_nodes.py: two network
namespaces on this machine), over a LAN of jumbo frames with nftables dropping 0 % and then 1 % of the VXLAN
datagrams each way, and over a LAN of 1,500 bytes (a full packet's datagram in two IP fragments). Each round records
iperf3's goodput and retransmits, and for each way of the wire what left, what came in, what the receiving port
found lost (gaps in the numbers) beside what nftables counted as dropped, the one-way delay, and the IP fragments
the sending node's kernel made and the receiving node's put together.

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
from bench.two_nodes import (  # noqa: E402
    NODE_A,
    NODE_B,
    UNDERLAY_MTU,
    dropped_by_nftables,
    fragment_counts,
    two_nodes,
    wire_spec,
)
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.results.wire_balance import wire_balance  # noqa: E402
from controlplane.terminal.tables import count, table  # noqa: E402

# (the LAN's MTU, the percent of the VXLAN datagrams nftables drops each way)
LINKS = ((UNDERLAY_MTU, 0), (UNDERLAY_MTU, 1), (1500, 0))
IPERF3_SECONDS = 3


def one_round(underlay_mtu: int, loss_percent: int, folder: Path) -> dict:
    spec, out = folder / "wire.yaml", folder / "results.json"
    spec.write_text(wire_spec(IPERF3_SECONDS))
    out.unlink(missing_ok=True)
    with two_nodes(loss_percent, underlay_mtu=underlay_mtu):
        run = subprocess.run(
            [str(HERE.parent / "tandem"), "run", str(spec), "--json", str(out), "--quiet"],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        if run.returncode != 0:
            raise SystemExit(f"wire-link: the run failed:\n{run.stderr}")
        dropped = {node.vxlan: dropped_by_nftables(node) for node in (NODE_A, NODE_B)}
        fragments = {node.vxlan: fragment_counts(node) for node in (NODE_A, NODE_B)}
    results = json.loads(out.read_text())
    ports = {port["name"]: port for port in results["ports"]}
    iperf3 = next(r["figures"] for r in results["lab"] if r["command"].startswith("iperf3 --client"))
    ways = {}
    for sender, receiver, node, peer in (("east", "west", NODE_A, NODE_B), ("west", "east", NODE_B, NODE_A)):
        balance = wire_balance(ports[sender], ports[receiver])
        delay = ports[receiver]["wire"]["delay"]
        ways[f"{sender} -> {receiver}"] = balance | {
            "dropped_by_nftables": dropped[node.vxlan],
            "fragments_made": fragments[node.vxlan]["fragments_made"],
            "reassembled": fragments[peer.vxlan]["reassembled"],
            "delay_mean_us": delay["mean_ns"] / 1e3 if delay else None,
        }
    return {
        "underlay_mtu": underlay_mtu,
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
            for mtu, loss in LINKS:  # interleaved, so that a slow spell of the machine hits all alike
                rounds.append(one_round(mtu, loss, Path(scratch)))
                print(f"round {number + 1}, MTU {mtu}, loss {loss} %: {rounds[-1]}", file=sys.stderr, flush=True)
    rows = []
    for mtu, loss in LINKS:
        mine = [r for r in rounds if (r["underlay_mtu"], r["loss_percent"]) == (mtu, loss)]
        goodput = statistics.median(r["goodput_gbps"] for r in mine)
        retransmits = statistics.median(r["retransmits"] for r in mine)
        for way in mine[0]["ways"]:
            each = [r["ways"][way] for r in mine]
            agreed = sum(w["lost"] <= w["dropped_by_nftables"] <= w["lost"] + w["after_last"] for w in each)
            rows.append([
                count(mtu), f"{loss} %", f"{goodput:.2f}", f"{retransmits:.0f}", way,
                count(statistics.median(w["sent"] for w in each)),
                count(sum(w["lost"] for w in each)), count(sum(w["dropped_by_nftables"] for w in each)),
                f"{agreed}/{len(each)}", "yes" if all(w["exact"] for w in each) else "NO",
                f"{statistics.median(w['delay_mean_us'] for w in each):.0f}",
                count(statistics.median(w["fragments_made"] for w in each)),
                count(statistics.median(w["reassembled"] for w in each)),
            ])  # fmt: skip
    machine = machine_description()
    headers = ["LAN MTU", "loss", "iperf3 Gbit/s", "retransmits", "way", "sent", "lost (gaps)", "nftables dropped",
               "agree", "balances", "one-way us", "IP fragments", "reassembled"]  # fmt: skip
    text = (
        f"a chain across two nodes over a VXLAN wire, iperf3 for {IPERF3_SECONDS} s, median of {args.rounds} rounds "
        f"(lost and dropped: summed over the rounds; agree: rounds where the gaps the port found are what nftables "
        f"dropped; IP fragments: what the sending node's kernel made, reassembled: the datagrams the receiving "
        f"node's put together from them; {machine}):\n" + table(headers, rows)
    )
    save_result("wire-link", {"machine": machine, "rounds": rounds}, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
