"""A private Open vSwitch for one kernel-I/O chain: its own database and run directory, ovsdb-server and ovs-vswitchd
started for the run (ovs-vswitchd inside the chain's switch namespace, whose interfaces it switches), one bridge
whose flows steer each port's frames to the next hop of the chain (by in_port: no MAC addressing needed), stopped
with the run, or with its chain where the chain leaves a running service first (stop). The daemons are the CLI's
children and die with it (PR_SET_PDEATHSIG), also when it is SIGKILLed; they are journaled too, so the next run stops
any that outlived it."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import time
from pathlib import Path

from controlplane.errors import SetupError
from controlplane.machine.child_death import Launcher, die_with_the_control_plane

SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
KERNEL_MODULE = Path("/sys/module/openvswitch")
START_SECONDS = 10  # for a socket or a pid file to appear
STOP_SECONDS = 5  # for a killed daemon to be reaped

# The switches this control plane started, by directory: a chain leaving a running service stops its own.
_STARTED: dict[str, OvsSwitch] = {}


def missing_reason(datapath: str) -> str | None:
    """Why OVS cannot run here with `datapath` (system: the kernel's, netdev: userspace), or None."""
    if not shutil.which("ovs-vswitchd") or not SCHEMA.exists():
        return "Open vSwitch is not installed (Debian's openvswitch-switch; ./scripts/setup.sh installs it)"
    if datapath == "system" and not KERNEL_MODULE.exists():
        return (
            "Open vSwitch's kernel datapath needs the openvswitch kernel module, which this kernel lacks "
            f"({KERNEL_MODULE} is missing; load it with `modprobe openvswitch` where the kernel has it). "
            "link: ovs-userspace runs the same "
            "switch with its userspace datapath; link: bridge (a Linux bridge) or b2b need nothing"
        )
    return None


@functools.cache
def _daemon_launcher() -> Launcher:
    """What starts the daemons, alive as long as the control plane: a service makes a chain's switch in the thread
    that answers its request, and a daemon started there would die with that thread."""
    return Launcher("ovs-launcher")


class OvsSwitch:
    def __init__(self, session, directory: Path, netns: str, datapath: str):
        reason = missing_reason(datapath)
        if reason:
            raise SetupError(f"link: {'ovs' if datapath == 'system' else 'ovs-userspace'}: {reason}")
        self.directory, self.netns, self.datapath = directory, netns, datapath
        self._daemons: list[subprocess.Popen] = []
        _STARTED[str(directory)] = self  # from here: a start that fails halfway is stopped as a whole
        session.own_directory(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.environment = dict(
            os.environ, OVS_RUNDIR=str(directory), OVS_LOGDIR=str(directory), OVS_DBDIR=str(directory)
        )
        self._run(["ovsdb-tool", "create", str(directory / "conf.db"), str(SCHEMA)])
        self._start(
            session,
            [
                "ovsdb-server",
                str(directory / "conf.db"),
                f"--remote=punix:{directory / 'db.sock'}",
                "--log-file",
                "--pidfile",
            ],
            directory / "db.sock",
        )
        self.vsctl("--no-wait", "init")
        self.switch_pid = self._start(
            session,
            ["ip", "netns", "exec", netns, "ovs-vswitchd", f"unix:{directory / 'db.sock'}", "--log-file", "--pidfile"],
            directory / "ovs-vswitchd.pid",
        )

    def _run(self, command: list[str]) -> str:
        result = subprocess.run(command, capture_output=True, text=True, env=self.environment, timeout=START_SECONDS)
        if result.returncode != 0:
            raise SetupError(
                f"Open vSwitch for the kernel chain: `{' '.join(command)}` said: {result.stderr.strip()}"
                f" (its logs: {self.directory})"
            )
        return result.stdout

    def _start(self, session, command: list[str], ready: Path) -> int:
        process = _daemon_launcher().popen(
            command,
            env=self.environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with_the_control_plane,
        )
        self._daemons.append(process)
        session.own_process(process.pid)
        deadline = time.monotonic() + START_SECONDS
        while not ready.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise SetupError(
                    f"Open vSwitch for the kernel chain: {command[0] if command[0] != 'ip' else 'ovs-vswitchd'} "
                    f"did not start (its log: {self.directory})"
                )
            time.sleep(0.02)
        return process.pid

    def vsctl(self, *args: str) -> str:
        return self._run(["ovs-vsctl", f"--db=unix:{self.directory / 'db.sock'}", "--timeout=10", *args])

    def pin(self, core: int) -> None:
        """Pins every thread of ovs-vswitchd (the switch: its datapath's work) to `core`."""
        for task in Path(f"/proc/{self.switch_pid}/task").iterdir():
            try:
                os.sched_setaffinity(int(task.name), {core})
            except OSError:
                pass  # a thread that ended meanwhile

    def bridge(self, name: str, ports: list[str], steering: list[tuple[str, str]]) -> None:
        """A bridge of `ports` (interfaces in the switch namespace) whose only flows send what enters one port of
        each pair out of the other; nothing else is forwarded."""
        commands = ["add-br", name, "--", "set", "bridge", name, f"datapath_type={self.datapath}", "fail_mode=secure"]
        for port in ports:
            commands += ["--", "add-port", name, port]
        self.vsctl(*commands)
        management = str(self.directory / f"{name}.mgmt")
        self._run(["ovs-ofctl", "del-flows", management])
        for source, target in steering:
            self._run(["ovs-ofctl", "add-flow", management, f"in_port={source},actions=output:{target}"])


def stop(directory: str) -> None:
    """Stops the switch started in `directory` (its daemons killed and reaped, the last started first) and removes its
    files: a chain that leaves a running service, or one the data plane refused. The run's journal finds neither."""
    switch = _STARTED.pop(directory, None)
    for daemon in reversed(switch._daemons if switch else []):
        daemon.kill()
        daemon.wait(timeout=STOP_SECONDS)
    shutil.rmtree(directory, ignore_errors=True)
