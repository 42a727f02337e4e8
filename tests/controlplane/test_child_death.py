"""Children that die with the thread that started them (PR_SET_PDEATHSIG): one started from a thread that ends dies
with it, one started through a Launcher outlives its caller's thread and dies only when it is ended."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from controlplane.machine.child_death import Launcher, die_with_the_control_plane, end

SLEEPER = ["sleep", "30"]


def started_from_a_thread_that_ends(start) -> subprocess.Popen:
    """The child `start()` starts, called from a thread that has ended by the time this returns."""
    started: list[subprocess.Popen] = []
    thread = threading.Thread(target=lambda: started.append(start()))
    thread.start()
    thread.join()
    return started[0]


def ended_within(process: subprocess.Popen, seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_a_child_started_from_a_thread_that_ends_dies_with_it():
    # What a service did when a request's thread started a chain's Open vSwitch: the daemons died as it answered.
    child = started_from_a_thread_that_ends(lambda: subprocess.Popen(SLEEPER, preexec_fn=die_with_the_control_plane))
    assert ended_within(child, 5) and child.returncode == -9


def test_a_child_started_through_a_launcher_outlives_the_thread_that_asked():
    launcher = Launcher("test-launcher")
    try:
        child = started_from_a_thread_that_ends(lambda: launcher.popen(SLEEPER, preexec_fn=die_with_the_control_plane))
        time.sleep(0.3)  # the asking thread is gone: a death signal would have come by now
        assert child.poll() is None
        end(child, 1)
        assert child.returncode == -15  # ended on purpose, by SIGTERM
    finally:
        launcher.close()


def test_a_closed_launcher_starts_nothing_and_a_failed_start_raises_in_the_caller():
    launcher = Launcher("test-launcher")
    with pytest.raises(FileNotFoundError):
        launcher.popen(["/nonexistent/program"])
    launcher.close()
    with pytest.raises(RuntimeError, match="starts no more"):
        launcher.popen(SLEEPER)
