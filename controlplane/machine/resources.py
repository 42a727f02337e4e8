"""How the control plane provides each machine resource a run needs. The data plane declares the resources once
(schedulers/mechanisms/machine_resources.h, listed by `--catalog`) and says which a run needs; each has one provider
here, and every change goes through the run's MachineSession, so it is undone on every exit path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controlplane.errors import SetupError
from controlplane.machine import changes, kernel_links, mounts


@dataclass
class RunPlace:
    """What a provider may fill in for the run: its id, the paths the data plane is given, and its chains (a
    kernel-I/O chain's `io` entry names the namespaces and interfaces made for it)."""

    run_id: str
    paths: dict
    chains: list


def _own_run_cgroup(session: changes.MachineSession, root: Path | None, run_id: str, missing: str) -> str:
    """Creates the run's cgroup under a hierarchy's root (journaled, removed at the end); its path for the data
    plane."""
    if root is None:
        raise SetupError(missing)
    session.own_cgroup(root / run_id, root)
    return str(root / run_id)


def _rt_unthrottled(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    # Busy real-time pollers are otherwise stalled ~50 ms every second by RT throttling.
    session.write(changes.RT_RUNTIME, -1)


def _rr_timeslice_ms(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    session.write(changes.RR_TIMESLICE, value)


def _cgroup_v2_dir(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    run.paths["cgroup_dir"] = _own_run_cgroup(
        session,
        mounts.cgroup_v2_mount(),
        run.run_id,
        "this scheduler needs cgroup v2, which is not mounted on this machine",
    )


def _cpu_cgroup_dir(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    # The data plane names the hierarchy ({"hierarchy": "v1" or "v2", "root": ...}; cgroup_fs.h's rule, which is
    # mounts.cgroup_hierarchy's): v1's cpu hierarchy where the host binds cpu there, else cgroup v2, where the run's
    # group has cpu only once its parent, the root, enables it for its children.
    hierarchy = value.get("hierarchy") if isinstance(value, dict) else None
    if hierarchy not in ("v1", "v2"):
        why = value.get("why") if isinstance(value, dict) else None
        raise SetupError(
            f"this scheduler needs the cgroup cpu controller: {why or mounts.cgroup_hierarchy_missing('cpu')}"
        )
    root = Path(value["root"])
    if hierarchy == "v2":
        session.enable_cgroup_controller(root, "cpu")
    run.paths["cpu_cgroup_dir"] = _own_run_cgroup(session, root, run.run_id, "")


def _cycle_costs(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    pass  # nothing on the machine: the pipeline fills every NF's cost in before launch (experiment/pipeline.py)


def _switch_costs(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    pass  # nothing on the machine: the pipeline fills the scheduler's switch costs in before launch


def _tracefs(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    # Best effort: without it the probe reports system calls as unavailable, saying why; the run goes on.
    session.mount_tracefs()


def _kernel_links(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    # {"switch_core": N} from a scheduler that places the switch (scc: -1 = the NFs' core); true: the kernel decides.
    switch_core = value.get("switch_core") if isinstance(value, dict) else None
    kernel_links.build(session, run.run_id, run.chains, switch_core)


def _reserved_cores(session: changes.MachineSession, value: Any, run: RunPlace) -> None:
    cores = {nf["core"] for chain in run.chains for nf in chain["nfs"]}
    session.reserve_cores(cores)


PROVIDERS: dict[str, Callable[[changes.MachineSession, Any, RunPlace], None]] = {
    "rt_unthrottled": _rt_unthrottled,
    "rr_timeslice_ms": _rr_timeslice_ms,
    "cgroup_v2_dir": _cgroup_v2_dir,
    "cpu_cgroup_dir": _cpu_cgroup_dir,
    "cycle_costs": _cycle_costs,
    "switch_costs": _switch_costs,
    "tracefs": _tracefs,
    "kernel_links": _kernel_links,
    "reserved_cores": _reserved_cores,
}


def provide(session: changes.MachineSession, requirements: dict[str, Any], run: RunPlace) -> None:
    """Provides every resource in `requirements` ({name: value}, as catalog.check answers) for the run."""
    for name, value in requirements.items():
        provider = PROVIDERS.get(name)
        if provider is None:
            raise SetupError(
                f"the data plane asks for machine resource '{name}', which this control plane cannot provide "
                "(a newer data plane than control plane? rebuild with ./scripts/setup.sh)"
            )
        provider(session, value, run)
