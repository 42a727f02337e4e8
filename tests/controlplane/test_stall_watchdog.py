"""The control plane's stall watchdog: a manager whose loop stops reporting during traffic is diagnosed and killed,
not waited for; one that stays silent only after its traffic ended is left to finish."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from controlplane.errors import EXIT_RUN_FAILED
from controlplane.launch import runner
from controlplane.machine import stall_diagnosis

# Stands in for tandem-manager: reports one progress event (and, if told, traffic_ended), then spins or sleeps.
FAKE_MANAGER = """\
import json, os, sys, time
events = os.fdopen(int(sys.argv[4]), "w")
mode = open(sys.argv[2]).read().strip()
events.write(json.dumps({"event": "progress", "t": 0.25, "phase": "warmup", "generated": 0, "delivered": 0,
                         "dropped": 0, "mpps": 0.0}) + "\\n")
events.flush()
if mode == "spin_with_a_worker":  # a worker of its own, as the real manager forks them (same process group)
    import subprocess
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    open(sys.argv[2] + ".worker", "w").write(str(worker.pid))
if mode == "quiet_after_traffic":
    events.write(json.dumps({"event": "traffic_ended"}) + "\\n")
    events.flush()
    time.sleep(2.0)  # stopping workers and probes report nothing, and may take this long
    sys.exit(0)
deadline = time.monotonic() + 60  # bounded even if the watchdog failed
while time.monotonic() < deadline:
    pass
"""


@pytest.fixture
def fake_manager(tmp_path, monkeypatch):
    script = tmp_path / "fake_manager"
    script.write_text(f"#!{sys.executable}\n" + FAKE_MANAGER)
    script.chmod(0o755)
    monkeypatch.setattr(runner.catalog, "MANAGER", script)
    monkeypatch.setattr(runner, "_expected_seconds", lambda config: 60.0)
    monkeypatch.setattr(runner, "STALL_SECONDS", 1.0)

    def drive(mode: str):
        run_dir = tmp_path / mode
        run_dir.mkdir()
        (run_dir / "config.json").write_text(mode)
        config = {"name": "fake", "control_core": sorted(os.sched_getaffinity(0))[0]}
        with runner._StopRequests() as stop:
            started = time.monotonic()
            outcome = runner._drive_manager(config, run_dir, stop, None)
        return outcome, time.monotonic() - started

    return drive


def test_a_manager_that_stops_reporting_is_diagnosed_and_killed(fake_manager):
    cpus_before = os.sched_getaffinity(0)
    outcome, seconds = fake_manager("spin")
    assert outcome.exit_status == EXIT_RUN_FAILED
    assert "stopped reporting at t=0.2 s" in outcome.error and "silent for 1 s" in outcome.error, outcome.error
    # The spinning thread is named, with the share of a CPU it used; the manager's stacks follow.
    spinning = [line for line in outcome.error.splitlines() if "fake_manager" in line or "python" in line]
    assert spinning and "state R" in spinning[0], outcome.error
    assert "the manager's stacks" in outcome.error
    assert seconds < 40  # not the 60 s the fake would spin, nor the overall deadline
    assert os.sched_getaffinity(0) == cpus_before  # the control plane left the control core again


def test_a_stalled_run_is_killed_with_every_process_of_its_manager(fake_manager, tmp_path):
    # A manager stuck in the kernel behind a real-time worker it started dies only once that worker is gone: the
    # workers are killed with it, not left to its death.
    outcome, _ = fake_manager("spin_with_a_worker")
    assert "stopped reporting" in outcome.error
    worker = int((tmp_path / "spin_with_a_worker" / "config.json.worker").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(worker):
        time.sleep(0.05)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    """Running, or stopped: not gone and not a zombie (which init may take a moment to reap)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_a_manager_that_does_not_end_even_when_killed_is_named_not_waited_for(monkeypatch):
    class NeverEnds:  # a manager stuck in the kernel (seen: reaping a child whose threads a poller starved)
        pid = os.getpid() + 4_000_000  # no such process: the kill finds nothing

        def wait(self, timeout=None):
            raise subprocess.TimeoutExpired("tandem-manager", timeout)

    monkeypatch.setattr(runner, "REAP_SECONDS", 0.01)
    errors = []
    assert runner._reaped(NeverEnds(), errors) is None
    assert len(errors) == 1 and f"the manager (pid {NeverEnds.pid}) did not end even when killed" in errors[0]


def test_silence_after_the_traffic_ended_is_not_a_stall(fake_manager):
    outcome, _ = fake_manager("quiet_after_traffic")
    # It wrote no results, so the run fails, but as a manager that ended without results, not as a stall.
    assert outcome.exit_status == EXIT_RUN_FAILED and "stopped reporting" not in (outcome.error or "")
    assert "exited with status 0 before it wrote its results" in outcome.error


def test_the_thread_table_reads_this_process():
    lines = stall_diagnosis.thread_table([os.getpid()])
    assert len(lines) >= 1 and lines[0].startswith(f"pid {os.getpid()} tid {os.getpid()}")
    assert " state " in lines[0] and " other" in lines[0] and "of a cpu" in lines[0]
    assert stall_diagnosis.run_processes(os.getpid())[0] == os.getpid()


def test_a_hang_report_names_every_process_below_the_command_and_the_run_logs(tmp_path, monkeypatch):
    monkeypatch.setattr(stall_diagnosis, "STATE_DIR", tmp_path)
    (tmp_path / "run-1").mkdir()
    (tmp_path / "run-1" / "manager.log").write_text("an early line\nthe manager's last line\n")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        report = stall_diagnosis.hang_report(os.getpid())
    finally:
        child.kill()
        child.wait()
    assert f"pid {os.getpid()} tid {os.getpid()}" in report and f"pid {child.pid} tid {child.pid}" in report, report
    assert "real-time threads on the machine:" in report
    assert (
        f"the last lines of {tmp_path / 'run-1' / 'manager.log'}:\n  an early line\n  the manager's last line" in report
    )
