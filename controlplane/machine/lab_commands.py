"""The programs a lab runs in its hosts' namespaces (iperf3, ping, curl, python3 -m http.server, ...): servers started
first and stopped at the end, clients one after another on each host, the hosts at once; each recorded with its exit
status, time, output and figures."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from controlplane.errors import SetupError, SpecError
from controlplane.machine.child_death import Launcher, die_with_the_control_plane
from controlplane.machine.lab_figures import figures

__all__ = ["LabCommands", "check", "figures"]

# Where `apt install` finds a program a lab command names, where its package is not named after it.
DEBIAN_PACKAGES = {"ping": "iputils-ping", "nc": "netcat-openbsd", "ss": "iproute2", "ab": "apache2-utils"}
# What the shell runs itself: a command that starts with one has no program to look for (`cd /srv && ...`).
SHELL_BUILTINS = {"cd", "exec", "export", "set", "ulimit", "umask", "trap", "eval", ".", ":", "wait", "read"}
LISTEN_WAIT = 5.0  # seconds the servers have to open their sockets
TERM_GRACE = 2.0  # seconds a process group has between SIGTERM and SIGKILL
POLL = 0.05  # seconds between looks at a running command
OUTPUT_TAIL_LINES = 20


def _addresses(lab: dict) -> dict[str, str]:
    """Each host's address without its prefix length, by host name: what {name} in a command stands for."""
    return {host["name"]: host["address"].split("/")[0] for host in lab["hosts"]}


def _substituted(template: str, addresses: dict[str, str], spec_path: str, source: str) -> str:
    try:
        return template.format_map(addresses)
    except KeyError as error:
        hosts = ", ".join(sorted(addresses))
        problem = f"{{{error.args[0]}}} names no host of the lab (hosts: {hosts}; write {{{{ and }}}} for a brace)"
    except (ValueError, IndexError, AttributeError) as error:
        problem = f"cannot substitute the host addresses ({error}; write {{{{ and }}}} for a literal brace)"
    raise SpecError(source, [(spec_path, problem)])


def _commands(lab: dict) -> list[tuple[dict, str, dict]]:
    """Every command of the lab: (host, role, command entry), servers first."""
    return [(host, role, entry) for role in ("serve", "run") for host in lab["hosts"] for entry in host[role]]


def check(lab: dict, source: str = "spec") -> None:
    """Refuses a lab whose commands cannot run here (an unknown {host}, a program this machine lacks: the command's
    first word, which the shell runs), before the run changes anything; `source` names the spec in the message."""
    addresses, problems = _addresses(lab), []
    for _, _, entry in _commands(lab):
        path = entry["spec_path"]
        try:
            words = shlex.split(_substituted(entry["command"], addresses, path, source))
        except SpecError as error:
            problems += error.problems
            continue
        except ValueError as error:  # shlex: an unclosed quote
            problems.append((path, f"cannot split the command into words: {error}"))
            continue
        if not words:
            problems.append((path, "the command is empty"))
        elif words[0] not in SHELL_BUILTINS and shutil.which(words[0]) is None:
            package = DEBIAN_PACKAGES.get(words[0], words[0])
            problems.append((path, f"{words[0]} is not installed on this machine (Debian: apt install {package})"))
    if problems:
        raise SpecError(source, problems)


@dataclass
class _Command:
    """One command of one host, and what became of it."""

    host: str
    netns: str
    role: str  # "serve" or "run"
    line: str  # the command, addresses substituted
    spec_path: str
    time_limit: float
    expected: str  # "success" or "failure"
    process: subprocess.Popen | None = None
    output: list[IO[bytes]] = field(default_factory=list)  # stdout, stderr
    started: float = 0.0
    ended: float | None = None
    exit_status: int | None = None
    ended_by_us: bool = False  # stopped, timed out or interrupted: its exit status is then ours, not its own
    timed_out: bool = False
    interrupted: bool = False

    def running(self) -> bool:
        return self.process is not None and self.ended is None


class LabCommands:
    """The commands of a lab whose network lab_network.build made (each host has its `netns`), run in the lab's
    `directory` where it has one (else the control plane's). Any thread may call its methods, one at a time."""

    def __init__(self, session, lab: dict, source: str = "spec"):
        self._session = session
        self._journal_lock = threading.Lock()  # the session's journal is not for several threads at once
        addresses = _addresses(lab)
        self._commands = [
            _Command(
                host=host["name"],
                netns=host["netns"],
                role=role,
                line=_substituted(entry["command"], addresses, entry["spec_path"], source),
                spec_path=entry["spec_path"],
                time_limit=entry["time_limit"],
                expected=entry["expect"],
            )
            for host, role, entry in _commands(lab)
        ]
        self._directory = lab.get("directory")
        self._interrupt = threading.Event()
        self._records: list[dict] | None = None
        self._launcher = Launcher("lab-launcher")

    # -- servers -------------------------------------------------------------------------------------------------------
    def start_servers(self) -> None:
        """Starts every host's servers in its namespace and waits (5 s at most) until each host has as many listening
        sockets as servers; a server that exits meanwhile is a SetupError that names it. On any failure the servers
        started so far are stopped before it raises."""
        servers = [command for command in self._commands if command.role == "serve"]
        try:
            for server in servers:
                self._launch(server)
            self._wait_until_listening(servers)
        except BaseException:
            self.stop()
            raise

    def _wait_until_listening(self, servers: list[_Command]) -> None:
        waiting = {}
        for server in servers:
            waiting[server.netns] = waiting.get(server.netns, 0) + 1
        deadline = time.monotonic() + LISTEN_WAIT
        while waiting and time.monotonic() < deadline:
            for server in servers:
                if server.process.poll() is not None:
                    self._ended(server)
                    raise SetupError(
                        f"the lab's server {server.spec_path} (`{server.line}` on {server.host}) exited with status "
                        f"{server.exit_status} before it listened; it said:\n  "
                        + "\n  ".join(self._output_tail(server, 5) or ["(nothing)"])
                    )
            for netns, count in list(waiting.items()):
                if _listening_sockets(netns) >= count:
                    del waiting[netns]
            time.sleep(POLL)

    # -- clients -------------------------------------------------------------------------------------------------------
    def run_clients(self, stop_requested: Callable[[], bool] | None = None) -> None:
        """Runs every host's clients, the hosts at once and each host's one after the other, each ended when its time
        limit passes (timed out) or when stop_requested() (asked in this thread) becomes true (interrupted). Returns
        when all are done."""
        by_host: dict[str, list[_Command]] = {}
        for command in self._commands:
            if command.role == "run":
                by_host.setdefault(command.host, []).append(command)
        errors: list[BaseException] = []
        threads = [
            threading.Thread(target=self._run_host, args=(commands, errors), name=f"lab-{host}", daemon=True)
            for host, commands in by_host.items()
        ]
        for thread in threads:
            thread.start()
        try:
            while any(thread.is_alive() for thread in threads):
                if stop_requested is not None and stop_requested():
                    self._interrupt.set()
                time.sleep(POLL)
        finally:  # also on KeyboardInterrupt: the clients end as interrupted before it goes on
            if any(thread.is_alive() for thread in threads):
                self._interrupt.set()
            for thread in threads:
                thread.join()
        if errors:
            raise errors[0]

    def _run_host(self, commands: list[_Command], errors: list[BaseException]) -> None:
        try:
            for command in commands:
                if self._interrupt.is_set():
                    command.interrupted = True  # never started
                    continue
                self._launch(command)
                while command.process.poll() is None:
                    if time.monotonic() - command.started > command.time_limit:
                        command.timed_out = True
                    elif self._interrupt.is_set():
                        command.interrupted = True
                    else:
                        time.sleep(POLL)
                        continue
                    self._end_group(command)
                self._ended(command)
        except BaseException as error:  # reported by run_clients, in its thread
            errors.append(error)

    # -- the end -------------------------------------------------------------------------------------------------------
    def stop(self) -> list[dict]:
        """Stops every server (and any client still running), kills whatever is left in the hosts' namespaces, and
        returns a record per command (see _record). Safe to call again: it returns the same records."""
        if self._records is not None:
            return self._records
        self._interrupt.set()  # a client thread still going (its caller gave up waiting) starts nothing more
        running = []
        for command in self._commands:
            if command.running() and command.process.poll() is not None:
                self._ended(command)  # exited by itself: its exit status is its own
            elif command.running():
                running.append(command)
        for command in running:
            command.ended_by_us = True
            command.interrupted = command.role == "run"  # a client cut short; a server's end is the stop's purpose
            _signal_group(command, signal.SIGTERM)
        deadline = time.monotonic() + TERM_GRACE
        for command in running:
            try:
                command.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(command, signal.SIGKILL)
                command.process.wait()
            self._ended(command)
        for netns in {command.netns for command in self._commands}:
            _kill_everything_in(netns)  # a server that left its group (a daemon) or outlived it
        self._records = [self._record(command) for command in self._commands]
        for command in self._commands:
            for output in command.output:
                output.close()
        self._launcher.close()
        return self._records

    def _record(self, command: _Command) -> dict:
        """What a command did. A server counts as met unless it exited by itself otherwise than expected; a client
        expected to fail meets it by failing, or by running past its time limit (a request a firewall drops)."""
        if command.role == "serve" and command.ended_by_us:
            met = command.expected == "success"
        elif command.interrupted or command.process is None:
            met = False
        elif command.expected == "success":
            met = command.exit_status == 0 and not command.timed_out
        else:
            met = command.timed_out or command.exit_status not in (0, None)
        stdout = b""
        if command.output:
            command.output[0].seek(0)
            stdout = command.output[0].read()
        return {
            "host": command.host,
            "role": command.role,
            "command": command.line,
            "spec_path": command.spec_path,
            "exit_status": command.exit_status,
            "seconds": round((command.ended or command.started) - command.started, 3),
            "timed_out": command.timed_out,
            "interrupted": command.interrupted,
            "expected": command.expected,
            "met": met,
            "output_tail": "\n".join(self._output_tail(command, OUTPUT_TAIL_LINES)),
            "figures": figures(command.line, stdout) if command.process is not None else {},
        }

    # -- processes -----------------------------------------------------------------------------------------------------
    def _launch(self, command: _Command) -> None:
        """Starts a command in its host's namespace, in a process group and a PID namespace of its own: the group is
        what a stop signals, and the PID namespace's first process is what dies with the control plane (SIGKILL when
        the launcher thread ends; journaled for the next run besides), taking everything the command started with it
        (a shell does not exec its last command, so the program would otherwise outlive its shell)."""
        command.output = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
        argv = ["ip", "netns", "exec", command.netns, "unshare", "--pid", "--fork", "--kill-child"]
        command.started = time.monotonic()
        command.process = self._launcher.popen(
            [*argv, "/bin/sh", "-c", command.line],
            cwd=self._directory,
            stdin=subprocess.DEVNULL,
            stdout=command.output[0],
            stderr=command.output[1],
            # A process group, not a session: under autogroup a session is a CFS group of its own, which a kernel
            # policy's NF core starves (docs/schedulers.md); in ours the clients compete with the NFs task by task.
            process_group=0,
            preexec_fn=die_with_the_control_plane,
        )
        with self._journal_lock:
            self._session.own_process(command.process.pid)

    def _end_group(self, command: _Command) -> None:
        command.ended_by_us = True
        _signal_group(command, signal.SIGTERM)
        try:
            command.process.wait(TERM_GRACE)
        except subprocess.TimeoutExpired:
            _signal_group(command, signal.SIGKILL)
            command.process.wait()

    def _ended(self, command: _Command) -> None:
        if command.ended is None:
            command.ended = time.monotonic()
            status = command.process.returncode
            command.exit_status = None if command.ended_by_us or status < 0 else status

    def _output_tail(self, command: _Command, lines: int) -> list[str]:
        """The last lines a command wrote, its standard output's and then its standard error's."""
        text = []
        for output in command.output:
            output.seek(0, os.SEEK_END)
            output.seek(max(0, output.tell() - 64 * 1024))
            text += output.read().decode(errors="replace").splitlines()
        return text[-lines:]


def _signal_group(command: _Command, sign: signal.Signals) -> None:
    try:
        os.killpg(command.process.pid, sign)
    except ProcessLookupError:
        pass  # ended meanwhile


def _listening_sockets(netns: str) -> int:
    result = subprocess.run(["ip", "netns", "exec", netns, "ss", "-Hltnu"], capture_output=True, text=True)
    return len([line for line in result.stdout.splitlines() if line.strip()])


def _kill_everything_in(netns: str) -> None:
    result = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True)
    for pid in result.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
