"""A service's hugepage memory across live changes: every re-layout starts new processes whose NFs build their tables
(ACL contexts, hash tables) in hugepage memory, and every rules change builds a new instance beside the old one.
What the gone processes and the replaced instances built is freed by the manager (nf_object_reclaim.h), so the
service's memory stays flat however many changes it takes, where it used to grow by every NF's tables each time
until an NF could not be built; and its run directory keeps no arguments file an NF no longer runs."""

from __future__ import annotations

import json
import time

from conftest import requires_root
from controlplane.machine.changes import STATE_DIR, free_hugepage_bytes
from integration.test_service import answered, ctl, results_when_stopped, serving

pytestmark = requires_root

# Large tables, so that a leak shows: two firewalls of 1,000 rules and a counter of 262,144 flows took 9 hugepages
# of 2 MiB at each switch between coop (a process per NF) and rtc (one for the chain) before they were freed.
SPEC = """\
name: memory
traffic: {rate: 200 kpps, size: 64, flows: 64}
scheduler: coop
chains:
  - name: c
    nfs:
      - {name: fw1, type: firewall, core: 1, args: {synthetic_rules: 1000}}
      - {name: count, type: counter, core: 1, args: {max_flows: 262144}}
      - {name: fw2, type: firewall, core: 1, args: {synthetic_rules: 1000}}
"""
ROUNDS = 5


def applied(socket, *args: str, stdin: str | None = None) -> dict:
    answer = ctl(socket, *args, stdin=stdin)
    assert answer.returncode == 0, answer.stderr
    change = answered(socket, json.loads(answer.stdout))
    assert change["state"] == "applied", change
    return change


def test_re_layouts_and_rules_changes_leave_the_services_hugepage_memory_flat(write_spec, tmp_path, machine_before):
    socket, out = tmp_path / "control" / "tandem.sock", tmp_path / "results.json"
    with serving(write_spec(SPEC), socket, out, "--ready-for", "rtc") as process:
        # The first switch and rules change make the heap as large as one layout beside another needs.
        applied(socket, "scheduler", "rtc")
        applied(socket, "args", "fw1", "-", stdin="{synthetic_rules: 1000, default: deny}")
        settled = free_hugepage_bytes()
        for round_ in range(ROUNDS):
            applied(socket, "scheduler", "coop" if round_ % 2 == 0 else "rtc")
            applied(socket, "args", "fw1", "-", stdin=f"{{synthetic_rules: {1000 + round_ + 1}, default: deny}}")
        # The frees run on the manager's thread a moment after each change: wait for the last ones.
        for _ in range(50):
            if free_hugepage_bytes() >= settled - 2 * 2**21:
                break
            time.sleep(0.1)
        after = free_hugepage_bytes()
        # The run's directory keeps the arguments file of fw1's running generation alone (a restart reads it): the
        # older ones went as each change was applied.
        args_files = [path.name for path in STATE_DIR.glob("run-*/nf-args-*")]
        results = results_when_stopped(socket, process, out)
    # Ten changes that each left 4 MiB or more behind before; the heap's own layout moves by a page or two (measured:
    # within 2 pages of 2 MiB over 14 switches once freed).
    assert after >= settled - 2 * 2**21, (settled, after)
    assert args_files == [f"nf-args-0-{ROUNDS + 1}.json"], args_files  # fw1 is NF 0; its last of ROUNDS + 1 changes
    reclaim = results["nf_object_reclaim"]
    # Each switch retires three NFs' instances (fw1's 1,000 IPv4 rules make one ACL context), each rules change one.
    assert reclaim["objects_freed"] >= 3 * ROUNDS + ROUNDS, reclaim
    assert reclaim["processes_unwatched"] == 0, reclaim
    accounting = results["accounting"]
    assert accounting["exact"] and accounting["in_flight"] == 0, accounting
