"""The cgroup tests on a host that mounts cgroup v2 only (as Debian 12, Ubuntu 22.04+, RHEL 9 and Kubernetes nodes
do), where our machines bind cpu to v1: a Debian kernel booted in QEMU with cgroup_no_v1=all (bench/vm_host.py) runs
the C++ cgroup tests and every integration test of NFVnice and the freezer, and the outcome of each test is saved.

Usage (as root): .venv/bin/python bench/cgroup_v2_host.py [--select EXPR] [--minutes 50]
Writes bench/results/cgroup-v2-host.{json.gz,md}.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.experiment_support import save_result  # noqa: E402
from bench.vm_host import must_be_root, run_tests, tested_host_text  # noqa: E402

# The tests whose paths differ between the hierarchies: NFVnice's cpu groups, the freezer's cgroup.freeze, and the
# cgroup file protocol of the C++ mechanisms.
SELECT = "nfvnice or freezer or cgroup or auto_switches_live_when_the_load_rises"  # the last starts on nfvnice
PYTEST_FILES = [
    "tests/integration/test_nfvnice.py",
    "tests/integration/test_unis.py",
    "tests/integration/test_graph.py",
    "tests/integration/test_faults.py",
    "tests/integration/test_restarts.py",
    "tests/integration/test_service.py",
    "tests/integration/test_auto.py",
    "tests/integration/test_long_line.py",
    "tests/controlplane/test_cgroups.py",
    "tests/controlplane/test_machine_resources.py",
]
MESON_TESTS = [
    "cpu_cgroups",
    "nfvnice",
    "cgroup_files",
    "process_controller",
]  # the suites of the cgroup files' C++ tests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", default=SELECT, help="pytest -k expression over the files the VM runs")
    parser.add_argument("--minutes", type=float, default=50, help="the VM's time, after which it is killed")
    args = parser.parse_args()
    if not must_be_root():
        return 2
    ran = run_tests("cgroup-v2", MESON_TESTS, PYTEST_FILES, args.select, 2, "cgroup_no_v1=all", args.minutes)
    if ran is None:
        return 1
    host, cases = ran
    text, counts = tested_host_text("The cgroup tests on a cgroup-v2-only host", host, cases)
    save_result("cgroup-v2-host", {"host": host, "select": args.select, "cases": cases, "counts": counts}, text)
    return 0 if counts["failed"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
