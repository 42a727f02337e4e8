"""The data plane's binaries and what they declare: NF types, scheduler modules, and argument checks."""

from __future__ import annotations

import json
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from controlplane.errors import SetupError, SpecError

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"
MANAGER = BUILD / "tandem-manager"
WORKER = BUILD / "tandem-worker"
SETUP_HINT = "run ./scripts/setup.sh (installs DPDK 22.11 and builds the data plane)"


def require_build() -> None:
    for binary in (MANAGER, WORKER):
        if not binary.exists():
            raise SetupError(f"the data plane is not built ({binary} is missing): {SETUP_HINT}")


def _manager(*args: str) -> dict:
    require_build()
    result = subprocess.run([str(MANAGER), *args], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        detail = result.stderr.strip().splitlines()[-1:] or ["no message"]
        if "error while loading shared libraries" in result.stderr:
            raise SetupError(f"DPDK libraries are missing ({detail[0]}): {SETUP_HINT}")
        raise SetupError(f"tandem-manager {' '.join(args)} failed: {detail[0]}")
    return json.loads(result.stdout)


@lru_cache(maxsize=1)
def catalog() -> dict:
    """{"nfs": [{name, help, args}], "schedulers": [{name, help, options}]}, as the data plane declares them."""
    return _manager("--catalog")


def scheduler_names() -> list[str]:
    return [entry["name"] for entry in catalog()["schedulers"]]


def check(config: dict, source: str) -> dict:
    """Checks NF arguments and scheduler options; returns machine requirements and memory needs."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json.dump(config, file)
        file.flush()
        verdict = _manager("--check", file.name)
    if verdict["errors"]:
        raise SpecError(source, [(e["path"], e["message"]) for e in verdict["errors"]])
    return verdict
