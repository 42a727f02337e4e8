"""Fixtures shared by the integration tests: every run must leave the machine as it found it."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from controlplane.errors import SetupError
from controlplane.machine import changes
from controlplane.machine.leftovers import leftovers, snapshot


def _reset_machine() -> None:
    """After a run that did not end: kill its CLI (which holds the machine's lock) and let a machine session kill
    the rest and undo what it changed. The test that left it still fails; the tests after it start clean instead
    of each failing on the lock (a clean-clone suite run once lost 35 tests to one hung run that way)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"-m\0controlplane\0" in command:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except ProcessLookupError:
                pass
    # A SIGKILLed CLI's manager lets go of the machine's lock only once it is gone too: wait for it (a stressed CI
    # run once found the lock still held 0.5 s after the kill, left the run's hugepages reserved, and so failed
    # every case of the next test as well).
    deadline = time.monotonic() + 15
    while True:
        time.sleep(0.5)
        try:
            with changes.MachineSession():
                break
        except SetupError:
            if time.monotonic() > deadline:
                raise
    deadline = time.monotonic() + 5  # SIGKILLed processes take a moment to be gone
    while any(item.startswith("process ") for item in leftovers()) and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.fixture(scope="session", autouse=True)
def machine_cleared_of_earlier_runs():
    """Before the first snapshot: undo what a run killed before this suite began left behind (its journal), so
    the first test is not blamed for the cleanup its own run would do. A CI check once failed the first
    integration test that way: a run killed with its machine had reserved hugepages, and the test's run gave
    them back."""
    if os.geteuid() == 0:  # without root every test here is skipped anyway
        with changes.MachineSession() as session:
            for note in session.notes:
                print(f"integration tests: {note}")
    yield


@pytest.fixture
def machine_before():
    before = snapshot()
    yield before
    left, now = leftovers(), snapshot()
    if left or now != before:
        _reset_machine()
    assert left == [] and now == before, {"left": left, "now": now, "before": before}
