"""What a run leaves of the control core to everything else there (a shell, a Ctrl-C, a monitoring agent): while a
chain runs under each scheduler, a task of the normal policy on the control core sleeps 10 ms at a time and records
how much later than asked it woke. Two chains on one NF core at 1 Mpps: three Tandem NFs, under every scheduler that
runs them; and the same with two unmodified testpmd processes in the middle, under each of unis's backends (the only
scheduler for unmodified processes). The run's own delivered share of what was offered stands beside each, and where
the NF processes' DPDK control threads (interrupts, multi-process IPC) were, read from /proc during the run. unis's
signal and freezer backends keep those threads on the NF core (schedulers/mechanisms/bystander_threads.h); the
ablation rows move them back to the control core once the run has started, as they were before.

Usage: .venv/bin/python bench/control_core_waits.py [--rounds 3] [--seconds 4]   (root)
Writes bench/results/control-core-waits.{json.gz,md}."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.experiment_support import save_result  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

CONTROL_CORE = 0
NAP_S = 0.01

NATIVE = """\
      - {name: fw, type: firewall, core: 1, cost_cycles: 60, args: {synthetic_rules: 10}}
      - {name: swap, type: macswap, core: 1, cost_cycles: 30}
      - {name: ttl, type: ttl, core: 1, cost_cycles: 30}
"""
MIXED = """\
      - {name: fw, type: firewall, core: 1, cost_cycles: 60, args: {synthetic_rules: 10}}
      - {name: pmd1, type: external, core: 1, cost_cycles: 30, args: {forward_mode: io}}
      - {name: pmd2, type: external, core: 1, cost_cycles: 30, args: {forward_mode: macswap}}
      - {name: ttl, type: ttl, core: 1, cost_cycles: 30}
"""
SPEC = """\
name: control-core
duration: SECONDS
warmup: 0.5
traffic: {rate: 1000000, size: 64, flows: 16}
scheduler: SCHEDULER
chains:
  - name: c
    nfs:
NFS"""

UNIS_BACKENDS = ["fifo", "signal", "freezer"]
CASES = [("native", name, NATIVE) for name in ["cfs", "coop", "bubble", "nfvnice", "rtc"]]
CASES += [("native", f"unis {backend}", NATIVE) for backend in UNIS_BACKENDS]
CASES += [("with testpmd", f"unis {backend}", MIXED) for backend in UNIS_BACKENDS]
ABLATED = [(chain, label) for chain, label, _ in CASES if label in ("unis signal", "unis freezer")]
CONTROL_THREADS = ("eal-intr-thread", "rte_mp_handle")


def nf_pids(log: Path) -> list[int]:
    """The NF processes the run's `started` line names."""
    line = next(line for line in log.read_text().splitlines() if line.startswith("started"))
    return [int(pid) for pid in re.findall(r"\(pid (\d+)", line)]


def control_threads(pids: list[int]) -> dict[int, set[int]]:
    """Each DPDK control thread of the NF processes and the CPUs it may run on; one that ends meanwhile is passed by."""
    found = {}
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                if (task / "comm").read_text().strip() in CONTROL_THREADS:
                    found[int(task.name)] = os.sched_getaffinity(int(task.name))
            except OSError:
                continue
    return found


def where(threads: dict[int, set[int]]) -> str:
    cores = set().union(*threads.values()) if threads else set()
    if not cores:
        return "-"
    return "control core" if cores == {CONTROL_CORE} else "NF core" if CONTROL_CORE not in cores else "both"


def scheduler_yaml(label: str) -> str:
    if label.startswith("unis "):
        return f"{{name: unis, options: {{backend: {label.split()[1]}}}}}"
    return label


def waits_while(
    run: subprocess.Popen, log: Path, seconds: float, moved: bool, ablated: bool
) -> tuple[list[float], str]:
    """Once the run's NFs have started (and, `ablated`, their control threads are moved to the control core): how late
    (s) each 10 ms nap of ours on the control core ended, for `seconds` (or until the run ends); and where the NFs'
    control threads were."""
    deadline = time.monotonic() + 60
    while "started" not in log.read_text():
        if run.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"control-core-waits: the run did not start:\n{log.read_text()}")
        time.sleep(0.05)
    pids = nf_pids(log)
    # `moved`: the scheduler moves the control threads when it adopts the NFs, which comes after `started`; measured
    # (or moved back) before that, a round would look at the threads where they were before the scheduler took over.
    while moved and where(control_threads(pids)) != "NF core":
        if run.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(
                f"control-core-waits: the NFs' control threads never reached the NF core:\n{log.read_text()}"
            )
        time.sleep(0.01)
    if ablated:
        for thread in control_threads(pids):
            try:
                os.sched_setaffinity(thread, {CONTROL_CORE})
            except OSError:
                pass  # ended meanwhile
    threads = where(control_threads(pids))
    ours = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {CONTROL_CORE})
    waits, end = [], time.monotonic() + seconds
    try:
        while not waits or (time.monotonic() < end and run.poll() is None):
            asked = time.monotonic()
            time.sleep(NAP_S)
            waits.append(time.monotonic() - asked - NAP_S)
    finally:
        os.sched_setaffinity(0, ours)
    return waits, threads


def one_round(chain: str, label: str, nfs: str, seconds: float, folder: Path, ablated: bool = False) -> dict:
    spec, out, log = folder / "spec.yaml", folder / "results.json", folder / "run.log"
    spec.write_text(
        SPEC.replace("SECONDS", str(seconds + 1)).replace("SCHEDULER", scheduler_yaml(label)).replace("NFS", nfs)
    )
    out.unlink(missing_ok=True)
    with open(log, "w") as stderr:
        run = subprocess.Popen(
            [str(HERE.parent / "tandem"), "run", str(spec), "--json", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            waits, threads = waits_while(run, log, seconds, (chain, label) in ABLATED, ablated)
            run.wait(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    if run.returncode != 0:
        raise SystemExit(f"control-core-waits: the {label} run failed:\n{log.read_text()}")
    window = json.loads(out.read_text())["chains"][0]["window"]
    return {
        "chain": chain,
        "scheduler": label,
        "ablated": ablated,
        "control_threads": threads,
        "naps": len(waits),
        "longest_wait_ms": max(waits) * 1e3,
        # With fewer than a hundred naps (a starved probe), the 99th percentile is the longest.
        "p99_wait_ms": (statistics.quantiles(waits, n=100)[98] if len(waits) >= 100 else max(waits)) * 1e3,
        "waits_over_100ms": sum(w > 0.1 for w in waits),
        "delivered_share": window["delivered_mpps"] / window["offered_mpps"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    cases = [case for case in CASES if case[2] is NATIVE or shutil.which("dpdk-testpmd")]
    rounds, skipped = [], {}
    with tempfile.TemporaryDirectory() as scratch:
        probe = Path(scratch) / "validate.yaml"
        for chain, label, nfs in cases:  # once, before the rounds: e.g. the freezer where cgroup v2 has no freezer
            probe.write_text(
                SPEC.replace("SECONDS", "1").replace("SCHEDULER", scheduler_yaml(label)).replace("NFS", nfs)
            )
            check = subprocess.run(
                [str(HERE.parent / "tandem"), "validate", str(probe)], capture_output=True, text=True
            )
            if check.returncode != 0:
                skipped[(chain, label)] = check.stderr.strip().splitlines()[-1]
                print(f"{chain}, {label}: skipped: {skipped[(chain, label)]}", file=sys.stderr, flush=True)
        for number in range(args.rounds):
            for chain, label, nfs in cases:  # interleaved, so that a slow spell of the machine hits every case
                if (chain, label) in skipped:
                    continue
                for ablated in (False, True) if (chain, label) in ABLATED else (False,):
                    rounds.append(one_round(chain, label, nfs, args.seconds, Path(scratch), ablated))
                    print(f"round {number + 1}: {rounds[-1]}", file=sys.stderr, flush=True)
    rows = []
    for chain, label, _ in cases:
        for ablated in (False, True):
            mine = [r for r in rounds if (r["chain"], r["scheduler"], r["ablated"]) == (chain, label, ablated)]
            if not mine:
                continue
            threads = sorted({r["control_threads"] for r in mine})
            rows.append([
                chain, label, "/".join(threads) + (" (ablation)" if ablated else ""),
                f"{statistics.median(r['longest_wait_ms'] for r in mine):,.1f}",
                f"{max(r['longest_wait_ms'] for r in mine):,.1f}",
                f"{statistics.median(r['p99_wait_ms'] for r in mine):.1f}",
                str(sum(r["waits_over_100ms"] for r in mine)),
                f"{statistics.median(r['delivered_share'] for r in mine):.2f}",
            ])  # fmt: skip
    machine = machine_description()
    headers = ["chain", "scheduler", "NFs' DPDK threads", "longest wait ms", "worst round", "p99 wait ms",
               "waits > 100 ms", "delivered / offered"]  # fmt: skip
    text = (
        f"how late a task on the control core woke from 10 ms naps while a chain ran on the NF core at 1 Mpps, "
        f"{args.seconds:g} s a round, median of {args.rounds} rounds (worst round: the longest wait of any round; "
        f"waits > 100 ms: summed over the rounds; {machine}):\n" + table(headers, rows)
    )
    if skipped:
        text += "\nnot run: " + "; ".join(f"{chain}, {label}: {why}" for (chain, label), why in skipped.items())
    save_result("control-core-waits", {"machine": machine, "rounds": rounds, "skipped": skipped}, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
