"""A service's live changes on their way to the data plane: each a JSON line written to the manager's commands pipe,
answered by its `change` event (applied, or refused naming the field) that the waiting request then returns. Requests
may come from several clients at once; each waits for its own answer."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable

# How long a request waits for the data plane's answer before it says `pending`: a change is taken between two
# batches, and an NF that gets no packets may not run a batch for a while (it is still taken before its next one).
ANSWER_SECONDS = 5.0


class LiveChanges:
    """Sends changes with `send(line)` once connected to the manager, and matches its answers to the requests."""

    def __init__(self):
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._send: Callable[[bytes], None] | None = None
        self._waiting: dict[int, threading.Event] = {}
        self._answers: dict[int, dict] = {}

    def connect(self, send: Callable[[bytes], None] | None) -> None:
        """The manager's commands pipe (None once it is gone: requests are then refused)."""
        with self._lock:
            self._send = send

    def request(self, change: dict, wait_s: float = ANSWER_SECONDS) -> dict:
        """Sends `change` ({"op": ..., ...}) and returns the data plane's answer, or {"state": "pending"}."""
        done = threading.Event()
        with self._lock:
            if self._send is None:
                return {"state": "refused", "errors": [{"path": "request", "message": "the data plane is not running"}]}
            change_id = next(self._ids)
            self._waiting[change_id] = done
            try:
                self._send(json.dumps({"id": change_id} | change).encode() + b"\n")
            except OSError:
                del self._waiting[change_id]
                return {"state": "refused", "errors": [{"path": "request", "message": "the data plane has stopped"}]}
        done.wait(wait_s)
        with self._lock:
            self._waiting.pop(change_id, None)
            return self._answers.pop(change_id, {"id": change_id, "state": "pending"} | _named(change))

    def follow(self, event: dict) -> None:
        """Takes the manager's events; its `change` answers wake the requests that wait for them."""
        if event.get("event") != "change":
            return
        with self._lock:
            change_id = event.get("id")
            if change_id in self._waiting:
                self._answers[change_id] = event
                self._waiting[change_id].set()


def _named(change: dict) -> dict:
    """A change as a pending reply repeats it: a chain to add by its name (the reply's `chain`), not whole."""
    if isinstance(change.get("chain"), dict):
        return change | {"chain": change["chain"].get("name")}
    return change
