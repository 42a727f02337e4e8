"""A child process's end: one that dies with the thread that started it (PR_SET_PDEATHSIG, passed as `preexec_fn`),
and one ended on purpose (SIGTERM, SIGKILL after a grace, reaped)."""

from __future__ import annotations

import ctypes
import signal
import subprocess

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def die_with_the_control_plane() -> None:
    """In the child, before it runs the command: SIGKILL when the thread that started it ends (the control plane
    killed with SIGKILL included). Safe beside other threads: one call, resolved before the fork, no lock."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def end(process: subprocess.Popen, grace_s: float) -> tuple:
    """SIGTERM, SIGKILL after `grace_s`, and reaped (its pipes drained, so that it cannot block on a full one);
    returns what it wrote on its pipes meanwhile (stdout, stderr; None for one not piped)."""
    output = (None, None)
    if process.poll() is None:
        process.terminate()
        try:
            output = process.communicate(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            output = process.communicate()
    process.wait()
    return output
