"""How far the fuzz targets get in a longer run than the test command's: executions and coverage per target.

Runs scripts/fuzz.sh (libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer; the NFs' packet parsers, the
manager's input and a wire port's trailers) for --seconds per target and keeps what it prints of each target. A
crash fails the run and names the input that caused it, as the test command's fuzzing does.

Usage: .venv/bin/python bench/fuzz_campaign.py [--seconds 600]
Writes bench/results/fuzzing.{json.gz,md}."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.experiment_support import save_result  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

# What scripts/fuzz.sh prints of a target that ran clean.
TARGET_LINE = re.compile(
    r"fuzz: (?P<target>\S+): (?P<executions>\d+) executions in (?P<seconds>\d+) s under ASan and UBSan, "
    r"(?P<edges>\d+) coverage edges, (?P<new>\d+) new inputs; no crash"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=600, help="per target")
    args = parser.parse_args()
    done = subprocess.run(
        [str(HERE.parent / "scripts" / "fuzz.sh"), str(args.seconds)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"fuzzing found a crash or did not run:\n{done.stdout}{done.stderr}")
    targets = [match.groupdict() for match in TARGET_LINE.finditer(done.stdout)]
    if not targets:
        sys.exit(f"scripts/fuzz.sh printed no target's figures:\n{done.stdout}")
    rows = [
        [t["target"], f"{int(t['executions']):,}", f"{int(t['executions']) / int(t['seconds']):,.0f}", t["edges"],
         t["new"]]
        for t in targets
    ]  # fmt: skip
    text = f"fuzzing under ASan and UBSan, {args.seconds} s per target ({machine_description()}); no crash\n\n" + table(
        ["target", "executions", "per second", "coverage edges", "new inputs"], rows
    )
    save_result("fuzzing", {"machine": machine_description(), "seconds": args.seconds, "targets": targets}, text)


if __name__ == "__main__":
    main()
