"""Shared test helpers: the repository root, the ./tandem command, and specs written to temporary files."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from controlplane.machine import mounts, stall_diagnosis
from controlplane.machine.child_death import end
from controlplane.machine.cores import usable_cores

REPO = Path(__file__).resolve().parent.parent


BASE_SPEC = """\
name: test
duration: 1
warmup: 0.3
traffic: {rate: max, size: 64, flows: 16}
scheduler: coop
chains:
  - name: c
    nfs:
      - {name: a, type: macswap, core: 1}
      - {name: b, type: ttl, core: 1}
      - {name: c3, type: checkip, core: 1}
"""

# The base chain (a, b, c3 on core 1) as a kernel-I/O chain, at a rate far below what its veths carry.
KERNEL_SPEC = (
    BASE_SPEC.replace("rate: max", "rate: 0.05 Mpps")
    .replace("scheduler: coop", "scheduler: cfs")
    .replace("  - name: c\n", "  - name: c\n    io: kernel\n    mux: 8\n    link: b2b\n")
)

# The kernel chain with its middle NF a DPDK NF (io: dpdk): kernel links on both sides of it, read and written by
# its own packet sockets.
MIXED_SPEC = KERNEL_SPEC.replace("{name: b, type: ttl, core: 1}", "{name: b, type: ttl, core: 1, io: dpdk}")

# A chain as a graph: an HTTP classifier's labelled fan-out and a join. 16 flows: 4 attack, 4 bare TCP segments
# (no request), 8 benign requests; 50 kpps is a small share of what four light NFs on one core process on any
# host we run, so nothing should queue long.
GRAPH_SPEC = """\
name: graph
duration: 1
warmup: 0.2
traffic: {rate: 50 kpps, flows: 16, http: {malicious: 0.25, other: 0.25}}
scheduler: coop
chains:
  - name: web
    graph:
      nodes:
        - {name: classify, type: http_classifier, core: 1}
        - {name: validate, type: validate_url, core: 1}
        - {name: count, type: count_url, core: 1}
        - {name: forward, type: ttl, core: 1}
      edges:
        - {from: classify, to: validate, label: http}
        - {from: classify, to: forward, label: other}
        - {from: validate, to: count}
        - {from: count, to: forward}
"""

# A parallel group: three μNFs that touch different fields get every packet at once, then re-join.
PARALLEL_SPEC = """\
name: parallel
duration: 1
warmup: 0.2
traffic: {rate: 50 kpps, flows: 16, http: {}}
scheduler: coop
chains:
  - name: web
    graph:
      nodes:
        - {name: check, type: checkip, core: 1}
        - {name: urls, type: count_url, core: 1}
        - {name: flows, type: counter, core: 1}
        - {name: swap, type: macswap, core: 1}
        - {name: forward, type: ttl, core: 1}
      edges:
        - {from: check, to: urls}
        - {from: check, to: flows}
        - {from: check, to: swap}
        - {from: urls, to: forward}
        - {from: flows, to: forward}
        - {from: swap, to: forward}
"""


@contextlib.contextmanager
def background(*args: str, env: dict | None = None):
    """`./tandem ARGS` running in the background, its output captured as text; on every way out of the block it is
    stopped if still running (SIGTERM, as a user would, so that it undoes its machine changes; SIGKILL after 60 s),
    and reaped: a failed test leaves no run behind, and no zombie (which the machine's leftovers check would count as
    a real-time thread in every later test)."""
    process = subprocess.Popen(
        [str(REPO / "tandem"), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        yield process
    except subprocess.TimeoutExpired as error:
        # A run that outlived the test's wait: what every process of it was doing, before it is ended, so that a
        # hang seen once (on a CI machine) is explained by its own failure report. SIGUSR1: the command line prints
        # its Python stacks (faulthandler) on its standard error.
        report = stall_diagnosis.hang_report(process.pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGUSR1)
        time.sleep(1)
        stderr = end(process, 60)[1] or ""
        raise AssertionError(
            f"{error}\n{report}\nthe command's standard error, last lines:\n{stderr[-4000:]}"
        ) from error
    finally:
        end(process, 60)


def tandem(*args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """`./tandem ARGS` to its end (`env`: its whole environment, if given); one that outlives `timeout` fails the test
    with what its processes were doing."""
    with background(*args, env=env) as process:
        stdout, stderr = process.communicate(timeout=timeout)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.fixture
def write_spec(tmp_path):
    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


requires_root = pytest.mark.skipif(os.geteuid() != 0, reason="runs need root (hugepages, real-time policies)")

# NFVnice's cpu groups go in the hierarchy that offers cpu (v1 where the host binds it there, else v2); the freezer's
# in cgroup v2 (cgroup.freeze). Where the host lacks one, the runs that need it are skipped, saying what is missing.
CPU_CGROUP = mounts.cgroup_hierarchy("cpu")
requires_cpu_cgroup = pytest.mark.skipif(
    CPU_CGROUP is None, reason=f"nfvnice needs the cgroup cpu controller: {mounts.cgroup_hierarchy_missing('cpu')}"
)
requires_cgroup_v2 = pytest.mark.skipif(
    mounts.cgroup_v2_mount() is None, reason="the freezer needs cgroup v2 (cgroup.freeze), which is not mounted here"
)


def requires_nf_cores(count: int):
    """Skips a test on a machine with fewer than `count` cores beside the control core (core 0): our 2-vCPU hosts
    have one; bench/many_core_host.py runs these tests in a VM of 4 virtual CPUs."""
    cores = len(usable_cores() - {0})
    return pytest.mark.skipif(
        cores < count,
        reason=f"needs {count} NF cores beside the control core; this machine has {cores} (bench/many_core_host.py)",
    )


def runnable(schedulers) -> list[str]:
    """The schedulers of `schedulers` this host can run: nfvnice only where a cgroup hierarchy offers cpu (a test
    that drops it has a case skipped with requires_cpu_cgroup, which says why)."""
    return [s for s in schedulers if s != "nfvnice" or CPU_CGROUP is not None]
