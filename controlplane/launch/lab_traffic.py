"""A lab's commands during a run: once traffic flows, its servers start, then its clients; when every client is done
(or the lab's duration passed), the run ends. What each command did goes into the results."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from controlplane.machine.busy_cores import BusyCores
from controlplane.machine.lab_commands import LabCommands

# A server's wait to listen, and the grace a stopped command gets before it is killed (lab_commands.py).
_START_SECONDS, _STOP_SECONDS = 5.0, 2.0


def seconds_allowed(lab: dict) -> float:
    """The longest a lab's commands may take: its servers starting, then each host's clients one after another (hosts
    at once), each to its time limit."""
    longest = max((sum(command["time_limit"] for command in host["run"]) for host in lab["hosts"]), default=0.0)
    if lab.get("seconds"):
        longest = min(longest, lab["seconds"])
    return _START_SECONDS + longest + _STOP_SECONDS * (1 + max(len(host["run"]) for host in lab["hosts"]))


class LabTraffic:
    """Runs the lab's servers and clients in a thread of its own, so the run's watch loop keeps reading the data
    plane's events meanwhile."""

    def __init__(self, session, lab: dict):
        self._lab = lab
        self._commands = LabCommands(session, lab)
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._stop = threading.Event()
        self._started_at = 0.0
        self.error: Exception | None = None  # a server that would not start, say
        # The whole machine's busy cores while the clients ran (Tandem's pollers, the applications, the kernel):
        # measured as the kernel's own forwarding is (experiment/kernel_anchor.py), to set them side by side.
        self.busy_cores: float | None = None
        self.client_seconds: float | None = None

    def start(self, stop_requested: Callable[[], bool]) -> None:
        """Starts the servers, then the clients; called once traffic flows through the chains."""
        if self._thread is not None:
            return
        self._started_at = time.monotonic()
        self._thread = threading.Thread(target=self._serve_and_run, args=(stop_requested,), daemon=True)
        self._thread.start()

    def _serve_and_run(self, stop_requested: Callable[[], bool]) -> None:
        try:
            self._commands.start_servers()
            busy = BusyCores()
            self._commands.run_clients(lambda: stop_requested() or self._stop.is_set() or self._past_duration())
            self.busy_cores, self.client_seconds = busy.cores(), busy.seconds()
        except Exception as error:  # reported as the run's error; the records say which command
            self.error = error
        finally:
            self._done.set()

    def _past_duration(self) -> bool:
        seconds = self._lab.get("seconds")
        return bool(seconds) and time.monotonic() - self._started_at > seconds

    def done(self) -> bool:
        """Every client has ended (or the lab could not start)."""
        return self._done.is_set()

    def finish(self) -> list[dict]:
        """Stops what still runs and returns every command's record."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=3 * _STOP_SECONDS + 1)
        return self._commands.stop()


def unmet(records: list[dict]) -> str | None:
    """The first command that did not do what the spec expects of it, in words; None if all did."""
    for record in records:
        if record["met"]:
            continue
        if record["timed_out"]:
            how = "ran past its time limit"
        elif record["interrupted"]:
            continue  # stopped by Ctrl-C or the lab's duration: not the command's fault
        elif record["exit_status"] is None:
            how = "was killed"
        else:
            how = f"exited with status {record['exit_status']}"
        tail = "\n".join("  " + line for line in record["output_tail"].splitlines()[-5:])
        return (
            f"{record['spec_path']} ({record['command']}) on {record['host']} {how}, expected {record['expected']}"
            + (f"; its output ends with:\n{tail}" if tail else "")
        )
    return None
