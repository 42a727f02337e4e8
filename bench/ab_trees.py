"""A/B of two builds of Tandem (two checkouts, each built): the same `compare` alternated between them, so the VM's
slow and fast spells fall on both; per scheduler the median delivered Mpps of each and their ratio.

A change that should not change behaviour (issue 16's reshapes) is within noise when every ratio is; this VM's
runs vary by +-30 %, so one round proves little: use 2 or more (each round runs both trees once).

Usage (as root): .venv/bin/python bench/ab_trees.py BEFORE_DIR AFTER_DIR [--spec examples/light-chain.yaml]
                 [--schedulers cfs,coop,...] [--rounds 2] [--repeat 3] [--duration 2] [--out bench/results/NAME.md]"""

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

from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402


def one_compare(tree: Path, spec: Path, args: argparse.Namespace, out: Path) -> dict[str, list[float]]:
    """Runs `compare` with `tree`'s tandem; returns each scheduler's delivered Mpps, one per run."""
    command = [
        str(tree / "tandem"),
        "compare",
        str(spec),
        "--repeat",
        str(args.repeat),
        "--duration",
        str(args.duration),
        "--json",
        str(out),
        "--quiet",
    ]
    if args.schedulers:
        command += ["--schedulers", args.schedulers]
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"ab_trees: {tree}: compare exited {done.returncode}: {done.stderr[-500:]}")
    comparison = json.loads(out.read_text())
    return {name: [run["delivered_mpps"] for run in entry["runs"]] for name, entry in comparison["schedulers"].items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--spec", type=Path, default=HERE.parent / "examples" / "light-chain.yaml")
    parser.add_argument("--schedulers", default="")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    for tree in (args.before, args.after):
        if not (tree / "tandem").exists():
            parser.error(f"{tree}: no tandem there (give a checkout that has been built)")
    runs: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    with tempfile.TemporaryDirectory(prefix="tandem-ab-") as work:
        for round_number in range(args.rounds):
            for label, tree in (("before", args.before), ("after", args.after)):
                print(f"round {round_number + 1}/{args.rounds}: {label} ({tree})", file=sys.stderr, flush=True)
                for name, mpps in one_compare(tree, args.spec.resolve(), args, Path(work) / "c.json").items():
                    runs[label].setdefault(name, []).extend(mpps)
    rows = []
    for name in runs["before"]:
        before, after = runs["before"][name], runs["after"].get(name, [])
        if not after:
            continue
        b, a = statistics.median(before), statistics.median(after)
        rows.append(
            [
                name,
                f"{b:.3f}",
                f"{min(before):.2f}-{max(before):.2f}",
                f"{a:.3f}",
                f"{min(after):.2f}-{max(after):.2f}",
                f"{a / b:.2f}" if b else "-",
            ]
        )
    per_tree = args.rounds * args.repeat
    text = (
        f"A/B: {args.spec.name}, {per_tree} runs of {args.duration:g} s per scheduler and tree, trees alternated over "
        f"{args.rounds} rounds of `compare --repeat {args.repeat}` ({machine_description()})\n"
        f"before: {args.before}\nafter:  {args.after}\n\n"
        + table(["scheduler", "before Mpps", "range", "after Mpps", "range", "after/before"], rows)
        + f"\n\nmedians of {per_tree} runs; this VM's runs vary by +-30 %"
    )
    print(text)
    if args.out:
        args.out.write_text(f"```\n{text}\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
