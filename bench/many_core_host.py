"""The tests that need more than one NF core, on a host that has them: our machines have two vCPUs (a control core
and one NF core), so a Debian kernel booted in QEMU with four virtual CPUs (bench/vm_host.py) runs every test marked
requires_nf_cores (an NF moved to another core while traffic flows, cores that run different scheduler modules
switched one by one, auto giving each core its own policy, at the start and live), and the outcome of each test is
saved. The virtual CPUs share this machine's two: the tests check what Tandem decides and that nothing is lost, not
speed.

Usage (as root): .venv/bin/python bench/many_core_host.py [--cpus 4] [--select EXPR] [--minutes 40]
Writes bench/results/many-core-host.{json.gz,md}.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.experiment_support import read_result, save_result  # noqa: E402
from bench.vm_host import must_be_root, run_tests, tested_host_text  # noqa: E402

# Where tests marked requires_nf_cores are.
PYTEST_FILES = [
    "tests/integration/test_nf_moves.py",
    "tests/integration/test_core_switches.py",
    "tests/integration/test_auto.py",
]
SELECT = (
    "moved_to_another_core or cores_run_different_modules or each_core_its_own_policy"
    " or switches_live_to_a_policy_per_core"
)


def with_earlier_outcomes(cases: list[dict]) -> list[dict]:
    """`cases`, and the saved outcome of each test that a narrower --select left out this time, marked as earlier:
    the file keeps every VM test's last outcome."""
    try:
        saved = read_result("many-core-host")["cases"]
    except (OSError, KeyError, ValueError):
        return cases
    ran = {case["test"] for case in cases}
    earlier = [case for case in saved if case["test"] not in ran]
    for case in earlier:
        if not case["reason"].startswith("(an earlier run)"):
            case["reason"] = ("(an earlier run) " + case["reason"]).strip()
    return cases + earlier


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", type=int, default=4, help="the VM's virtual CPUs (core 0 is the control core)")
    parser.add_argument("--select", default=SELECT, help="pytest -k expression over the files the VM runs")
    parser.add_argument("--minutes", type=float, default=40, help="the VM's time, after which it is killed")
    args = parser.parse_args()
    if not must_be_root():
        return 2
    if args.cpus < 3:
        print("error: --cpus: at least 3 (a control core and two NF cores)", file=sys.stderr)
        return 2
    ran = run_tests("many-core", [], PYTEST_FILES, args.select, args.cpus, "", args.minutes)
    if ran is None:
        return 1
    host, cases = ran
    cases = with_earlier_outcomes(cases)
    text, counts = tested_host_text(f"The tests that need NF cores, on {args.cpus} virtual CPUs", host, cases)
    save_result("many-core-host", {"host": host, "select": args.select, "cases": cases, "counts": counts}, text)
    return 0 if counts["passed"] and counts["failed"] == counts["error"] == counts["skipped"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
