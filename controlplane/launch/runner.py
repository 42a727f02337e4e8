"""One launch: prepare the machine, start the manager, show its progress, forward Ctrl-C, collect the results."""

from __future__ import annotations

import contextlib
import json
import math
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from controlplane.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_RUN_FAILED, RunFailed, SpecError
from controlplane.launch.control_server import ControlServer, read_token
from controlplane.launch.lab_traffic import LabTraffic, seconds_allowed, unmet
from controlplane.launch.live_changes import LiveChanges
from controlplane.launch.live_links import ChangesMakingLinks
from controlplane.launch.service_status import ServiceStatus
from controlplane.machine import changes, kernel_links, lab_network, resources, stall_diagnosis, vxlan_links
from controlplane.spec import catalog
from controlplane.spec.live_additions import LiveAdditions

# Signals that end a run early: the manager is told to stop, and the run ends cleanly with partial results.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# While traffic runs the manager reports progress every 250 ms from its one loop; this long a silence means the
# loop is stuck (a lock, a starved thread it waits for), and SIGTERM, which that loop would have to see, is no use.
STALL_SECONDS = 10.0
# How long a manager that has closed its events, or was told to stop, or killed, takes to be gone at most.
REAP_SECONDS = 30.0


@dataclass
class LaunchOutcome:
    results: dict | None
    exit_status: int
    error: str | None = None
    notes: list[str] = field(default_factory=list)  # stale state cleared, warnings
    log_tail: str = ""


class _StopRequests:
    """Turns Ctrl-C and termination signals into a flag while a run is in progress."""

    def __init__(self):
        self.requested = False
        self._previous = {}

    def __enter__(self):
        for sig in STOP_SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        self.requested = True

    def request(self) -> None:
        """A stop asked for otherwise than by a signal (a service's control API), from any thread."""
        self.requested = True

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def _expected_seconds(config: dict) -> float:
    """How long a run may take before the watchdog stops it: the manager's own allowances (from its catalog) for
    workers attaching (each at most its own, one after another: the manager fails one that makes no progress much
    sooner) and stopping, the traffic, the drain, and 5 s for starting DPDK and writing results."""
    limits = catalog.catalog()["limits"]
    workers = sum(len(chain["nfs"]) for chain in config["chains"])
    attach = limits["attach_most_seconds"] * max(workers, 1)
    if config["duration"] == 0:  # until stopped: by Ctrl-C (a service: ctl stop), or when the lab's clients are done
        if "lab" not in config or config.get("serve"):
            return math.inf
        traffic = seconds_allowed(config["lab"])
    else:
        traffic = config["warmup"] + config["duration"]
    return attach + traffic + 0.2 + 5 + limits["stop_seconds"]


def run_once(config: dict, source: str, on_event: Callable[[dict], None] | None = None) -> LaunchOutcome:
    """Checks `config` with the data plane and launches it as it is (pipeline.run places and costs it first)."""
    return launch(config, catalog.check(config, source), on_event)


def launch(
    config: dict,
    verdict: dict,
    on_event: Callable[[dict], None] | None = None,
    additions: Callable[[dict], LiveAdditions] | None = None,
) -> LaunchOutcome:
    """Runs a checked `config` (`verdict` is catalog.check's answer for it) on the data plane; every machine change
    is undone before returning. `additions(running config)`: what checks a service's chains and ports to add
    (spec/live_additions.py); without it, the service takes none."""
    # The stop requests outlast the machine session: a Ctrl-C or SIGTERM while the session undoes its changes (a run
    # ending, a service failing) is a request like any other, not a signal's default end in the middle of the undo,
    # which left hugepages, DPDK's files and the journal behind (seen in a VM: a service terminated as it ended).
    with _StopRequests() as stop, changes.MachineSession() as session:
        run_id = f"tandem{os.getpid()}"
        run_dir = changes.STATE_DIR / f"run-{os.getpid()}"
        session.own_directory(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        session.own_directory(changes.DPDK_RUNTIME / run_id)
        huge_dir = changes.STATE_DIR / f"huge-{os.getpid()}"
        session.reserve_hugepages(verdict["hugepages_2mb"])
        session.mount_hugetlbfs(huge_dir)
        config = dict(
            config,
            scheduler=dict(config["scheduler"], options=verdict["options"]),
            chains=[dict(chain, io=dict(chain["io"])) if "io" in chain else chain for chain in config["chains"]],
        )
        config["prepared"] = verdict["requirements"]  # what a service's scheduler switch may count on
        config["paths"] = {
            "file_prefix": run_id,
            "huge_dir": str(huge_dir),
            "run_dir": str(run_dir),
            "worker_binary": str(catalog.WORKER),
        }
        requirements = verdict["requirements"]
        if config.get("serve"):
            # A service's NF cores are its NFs' alone while it runs, as an operator isolates them: any other task
            # there (a client, a shell) takes the core from real-time pollers for up to 50 ms through the kernel's
            # fair server, and the chains' entry rings overflow.
            requirements = {"reserved_cores": True} | requirements
        resources.provide(session, requirements, resources.RunPlace(run_id, config["paths"], config["chains"]))
        vxlan_links.make_all(session, config.get("ports", []))  # before the data plane opens them
        lab = None
        if "lab" in config:  # its namespaces and veths before the data plane opens their ends as ports
            config["lab"] = dict(config["lab"], hosts=[dict(host) for host in config["lab"]["hosts"]])
            lab_network.build(session, run_id, config["lab"])
            lab = LabTraffic(session, config["lab"])
        (run_dir / "config.json").write_text(json.dumps(config, indent=2))
        servers, live = [], None
        try:
            if config.get("control_socket"):  # a service (./tandem serve): its control API while the run lasts
                socket_path = Path(config["control_socket"])
                session.own_socket(socket_path)
                status, live = ServiceStatus(config), LiveChanges()
                checks = additions(config) if additions else None
                linked = ChangesMakingLinks(live, session, checks, config)
                servers.append(ControlServer(socket_path, status, stop.request, linked, additions=checks))
                if config.get("control_listen"):  # and on TCP: loopback, or with its token
                    host, port = config["control_listen"]
                    token = read_token(config["control_token_file"]) if config.get("control_token_file") else None
                    servers.append(ControlServer.on_tcp(host, port, token, status, stop.request, linked, checks))
                # A port the data plane opened is one that chains may name before its answer reaches the client.
                follow = _both(linked.follow, _both(checks.follow, live.follow) if checks else live.follow)
                on_event = _both(follow, _both(status.follow, on_event))
            outcome = _drive_manager(config, run_dir, stop, on_event, lab, live)
        finally:
            for server in servers:
                server.close()
        if outcome.results is not None and any("io" in chain for chain in config["chains"]):
            outcome.results["kernel_interfaces"] = kernel_links.interface_counters(config["chains"])
        outcome.notes = session.notes + outcome.notes
        return outcome


@contextlib.contextmanager
def _ahead_of_the_manager():
    """While it lasts, this process runs under SCHED_FIFO at the lowest priority, so Ctrl-C and the watchdogs below are
    served at once, whatever the busy manager beside us on the control core does to CFS. Under unis's signal backend
    (~37,000 SIGSTOPs and SIGCONTs a second) CFS once left every other task of the control core without the CPU for
    the whole run: a Ctrl-C was read only after 20 s of traffic (the stopped NFs' DPDK threads woke there at each
    switch; they now wait on their NF's core: schedulers/mechanisms/bystander_threads.h). The manager and anything
    else we start stay under CFS
    (SCHED_RESET_ON_FORK). We only wait on a selector here: nothing of ours spins at that priority. Where the kernel
    refuses (no root, an RT-less cgroup), we run as we were."""
    policy, priority = os.sched_getscheduler(0), os.sched_getparam(0).sched_priority
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(1))
        raised = True
    except OSError:
        raised = False
    try:
        yield
    finally:
        if raised:
            os.sched_setscheduler(0, policy, os.sched_param(priority))


def _drive_manager(
    config: dict,
    run_dir: Path,
    stop: _StopRequests,
    on_event,
    lab: LabTraffic | None = None,
    live: LiveChanges | None = None,
) -> LaunchOutcome:
    log_path = run_dir / "manager.log"
    # We stay on the control core while the run lasts, as the manager does: on an NF core, a real-time poller
    # would starve us, and with us the watchdogs below.
    our_cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {config["control_core"]})
    our_nice = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        with _ahead_of_the_manager():
            return _watch_manager(config, run_dir, log_path, stop, on_event, our_nice, lab, live)
    finally:
        os.sched_setaffinity(0, our_cpus)


def _watch_manager(
    config: dict,
    run_dir: Path,
    log_path: Path,
    stop: _StopRequests,
    on_event,
    nice: int,
    lab: LabTraffic | None = None,
    live: LiveChanges | None = None,
) -> LaunchOutcome:
    read_end, write_end = os.pipe()
    # A service's live changes go to the manager's standard input, a JSON line each.
    commands = ["--commands-fd", "0"] if live is not None else []
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [str(catalog.MANAGER), "--run", str(run_dir / "config.json"), "--events-fd", str(write_end), *commands],
            pass_fds=(write_end,),
            stdin=subprocess.PIPE if live is not None else subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            # Its own process group, so that a terminal's Ctrl-C reaches us only and we decide how the manager stops;
            # not its own session: with autogroup scheduling (the kernel's default) a session is a CFS group of its
            # own, and a kernel-I/O run's group held its NF core for the whole run against every task of the
            # session that started it (a test's steps, pinned there, ran only once the run had ended).
            process_group=0,
        )
    # The caller's nice, which a fork from our real-time thread resets to 0 (SCHED_RESET_ON_FORK): under `nice` the
    # manager, busy on the control core, would otherwise take it from the lab's clients there, which keep the
    # caller's (iperf3 got 8 % of the core beside it, and a lab test under `nice -n 10` never saw its transfer).
    # Set before the manager's EAL start-up is through, so its workers inherit it too.
    os.setpriority(os.PRIO_PROCESS, process.pid, nice)
    os.close(write_end)
    if live is not None:
        live.connect(lambda line: (process.stdin.write(line), process.stdin.flush()))
    selector = selectors.DefaultSelector()
    selector.register(read_end, selectors.EVENT_READ)
    pending = b""  # what the manager wrote past its last complete line
    deadline = time.monotonic() + _expected_seconds(config)
    spec_errors, errors, warnings, results_path = [], [], [], None
    stop_sent_at = None
    # From its first progress report until the traffic ends or the run fails, the manager's loop reports steadily.
    in_traffic, last_event_at, last_t = False, time.monotonic(), 0.0
    try:
        while True:
            if in_traffic and stop_sent_at is None and time.monotonic() - last_event_at > STALL_SECONDS:
                errors.append(
                    f"the manager stopped reporting at t={last_t:.1f} s and was silent for {STALL_SECONDS:.0f} s: "
                    f"its loop is stuck; the run was killed. What its threads were doing:\n"
                    + stall_diagnosis.diagnose(process.pid)
                )
                _kill_the_run(process)
                break
            if stop.requested and stop_sent_at is None:
                process.send_signal(signal.SIGTERM)
                stop_sent_at = time.monotonic()
            if lab is not None and lab.done() and stop_sent_at is None and not config.get("serve"):
                process.send_signal(signal.SIGTERM)  # the clients are done: the traffic ends, the chains drain
                stop_sent_at = time.monotonic()
            if time.monotonic() > deadline and stop_sent_at is None:
                errors.append(f"the data plane did not finish within {_expected_seconds(config):.0f} s")
                process.send_signal(signal.SIGTERM)
                stop_sent_at = time.monotonic()
            if stop_sent_at is not None and time.monotonic() - stop_sent_at > 10:
                # What its threads were waiting for, read before the kill (a stop that waited out EAL's IPC timeouts
                # twice, seen once in CI after a testpmd's removal, would show there).
                diagnosis = stall_diagnosis.diagnose(process.pid)
                _kill_the_run(process)
                errors.append(
                    "the manager did not stop within 10 s of being asked and was killed. What its threads were "
                    "doing:\n" + diagnosis
                )
                break
            if not selector.select(timeout=0.1):
                continue
            # Everything that arrived, line by line: one read may bring several events (an error and the results).
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break  # the manager closed its end: it has exited
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                event = json.loads(line)
                kind = event.get("event")
                last_event_at = time.monotonic()
                if kind == "progress":
                    in_traffic, last_t = True, event["t"]
                    if lab is not None:
                        lab.start(lambda: stop.requested)
                elif kind in ("traffic_ended", "error", "done"):
                    in_traffic = False
                if kind == "spec_error":
                    spec_errors.append((event["path"], event["message"]))
                elif kind == "error":
                    errors.append(event["message"])
                elif kind == "warning":
                    warnings.append(event["message"])
                elif kind == "done":
                    results_path = event["results"]
                if on_event:
                    on_event(event)
    finally:
        selector.close()
        os.close(read_end)
        if live is not None:
            live.connect(None)
            with contextlib.suppress(OSError):
                process.stdin.close()
        status = _reaped(process, errors)
        lab_records = lab.finish() if lab is not None else None
    log_tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-15:])
    if spec_errors:
        raise SpecError(config["name"], spec_errors)
    results = json.loads(Path(results_path).read_text()) if results_path else None
    if lab is not None:
        if results is not None:
            results["lab"] = lab_records
            results["lab_cpu"] = {"busy_cores": lab.busy_cores, "client_seconds": lab.client_seconds}
        if lab.error is not None:
            errors.insert(0, f"the lab: {lab.error}")
        elif not stop.requested and (problem := unmet(lab_records)):
            errors.insert(0, f"a lab command did not do what the spec expects: {problem}")
    # A run until stopped ends whole when stopped (a service, or ports without a lab): that is how it ends.
    if stop.requested and not (config.get("duration") == 0 and (lab is None or config.get("serve"))):
        return LaunchOutcome(results, EXIT_INTERRUPTED, "interrupted", warnings, log_tail)
    if status != 0 or errors or results is None:
        message = with_worker_words(errors[0], log_tail) if errors else manager_death(process.pid, status, log_tail)
        return LaunchOutcome(results, EXIT_RUN_FAILED, message, warnings, log_tail)
    return LaunchOutcome(results, EXIT_OK, None, warnings, log_tail)


def _kill_the_run(process: subprocess.Popen) -> None:
    """SIGKILL to the manager and every process of its session (workers, applications), not only to the manager:
    a manager stuck in the kernel behind a real-time poller it started dies only once that poller is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _reaped(process: subprocess.Popen, errors: list[str]) -> int | None:
    """The manager's exit status once it has ended (it closed its events, or was told to stop, or killed). One that
    does not end is killed with its run; one that survives even that is named with where it is stuck, and left
    (None): the command still ends, and undoes what it can."""
    for seconds in (REAP_SECONDS, REAP_SECONDS):
        try:
            return process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            _kill_the_run(process)
    stack = stall_diagnosis.kernel_stack(process.pid)
    errors.append(f"the manager (pid {process.pid}) did not end even when killed; it is stuck in the kernel at {stack}")
    return None


def _both(first: Callable[[dict], None], second: Callable[[dict], None] | None) -> Callable[[dict], None]:
    def observe(event: dict) -> None:
        first(event)
        if second is not None:
            second(event)

    return observe


def with_worker_words(message: str, log_tail: str) -> str:
    """A failed worker's error with what the worker itself printed (its lines in the manager's log, which goes with
    the run's directory), so the user sees why an NF did not start."""
    said = [line for line in log_tail.splitlines() if line.startswith("tandem-worker ")]
    if not said or "manager log" not in message:
        return message
    return (
        message.replace(" (its message is in the manager log)", "")
        + "; it said: "
        + said[-1].removeprefix("tandem-worker ")
    )


def manager_death(pid: int, status: int, log_tail: str) -> str:
    """What to tell the user when the manager itself ended without results: how it ended and its last words."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = "an unknown signal"
        how = (
            f"the manager (tandem-manager, pid {pid}) was killed by signal {-status} ({name}) "
            "before it wrote its results"
        )
    else:
        how = f"the manager (tandem-manager, pid {pid}) exited with status {status} before it wrote its results"
    if not log_tail.strip():
        return how + "; it had written nothing to its log"
    return how + "; its log ends with:\n" + "\n".join("  " + line for line in log_tail.splitlines())


def require_success(outcome: LaunchOutcome) -> dict:
    if outcome.exit_status != EXIT_OK or outcome.results is None:
        raise RunFailed(outcome.error or "the run failed")
    return outcome.results
