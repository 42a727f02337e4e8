"""The control plane's stall watchdog: a manager whose loop stops reporting during traffic is diagnosed and killed,
not waited for; one that stays silent only after its traffic ended is left to finish."""

from __future__ import annotations

import os
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
