"""A child process's end: one that dies with the thread that started it (PR_SET_PDEATHSIG, passed as `preexec_fn`),
so started from a thread that lives as long as the child should (Launcher), and one ended on purpose (SIGTERM,
SIGKILL after a grace, reaped)."""

from __future__ import annotations

import ctypes
import queue
import signal
import subprocess
import threading
from concurrent.futures import Future

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def die_with_the_control_plane() -> None:
    """In the child, before it runs the command: SIGKILL when the thread that started it ends (the control plane
    killed with SIGKILL included). Safe beside other threads: one call, resolved before the fork, no lock."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class Launcher:
    """A thread that starts children, alive until closed: a child that dies with the thread that started it
    (die_with_the_control_plane) must not be started by a thread that ends first (one that drives a lab's clients,
    one that answers a service's request)."""

    def __init__(self, name: str):
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        threading.Thread(target=self._start_each, args=(self._requests,), name=name, daemon=True).start()

    @staticmethod
    def _start_each(requests: queue.SimpleQueue) -> None:
        while (request := requests.get()) is not None:
            argv, options, started = request
            try:
                started.set_result(subprocess.Popen(argv, **options))
            except BaseException as error:  # raised in the caller's thread
                started.set_exception(error)

    def popen(self, argv: list[str], **options) -> subprocess.Popen:
        if self._closed:
            raise RuntimeError("stopped: it starts no more commands")
        started: Future = Future()
        self._requests.put((argv, options, started))
        return started.result()

    def close(self) -> None:
        self._closed = True
        self._requests.put(None)


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
