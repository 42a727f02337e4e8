"""A child process that dies with the thread that started it (PR_SET_PDEATHSIG), passed as `preexec_fn`."""

from __future__ import annotations

import ctypes
import signal

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def die_with_the_control_plane() -> None:
    """In the child, before it runs the command: SIGKILL when the thread that started it ends (the control plane
    killed with SIGKILL included). Safe beside other threads: one call, resolved before the fork, no lock."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
