"""A Ctrl-C or SIGTERM while a run undoes its machine changes is a stop request, not an end halfway through the undo."""

from __future__ import annotations

import signal

import pytest

from controlplane.launch import runner


class _Failed(Exception):
    pass


def test_the_machine_session_is_undone_with_the_stop_signals_still_caught(monkeypatch):
    seen = {}

    class Session:
        """Fails the run at its first use; records the signal handlers in place while it is undone."""

        def __enter__(self):
            return self

        def __getattr__(self, name):
            raise _Failed(name)

        def __exit__(self, *exc):
            seen.update({sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)})
            return False

    monkeypatch.setattr(runner.changes, "MachineSession", Session)
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(_Failed):
        runner.launch({}, {})
    assert seen, "the session was not undone"
    for sig, handler in seen.items():
        assert isinstance(getattr(handler, "__self__", None), runner._StopRequests), (sig, handler)
    assert {sig: signal.getsignal(sig) for sig in before} == before  # given back once the session is undone
