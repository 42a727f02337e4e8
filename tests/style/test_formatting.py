"""The whole tree keeps one style: ruff's lint and format rules for Python (ruff.toml) and clang-format's for C++
(.clang-format). A failure names each file and what differs; `.venv/bin/ruff format .`, `.venv/bin/ruff check --fix .`
and `git ls-files -z '*.cc' '*.h' | xargs -0 clang-format -i` apply them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

RUFF = Path(sys.executable).parent / "ruff"


def tracked(*patterns: str) -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", *patterns], cwd=REPO, capture_output=True, check=True)
    return [name for name in listed.stdout.decode().split("\0") if name and (REPO / name).exists()]


def run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_python_passes_the_lint_rules():
    result = run([str(RUFF), "check", "--no-cache", "."])
    assert result.returncode == 0, result.stdout + result.stderr


def test_python_is_formatted():
    result = run([str(RUFF), "format", "--no-cache", "--check", "."])
    assert result.returncode == 0, result.stdout + result.stderr


def test_cpp_is_formatted():
    if shutil.which("clang-format") is None:
        pytest.fail("clang-format is missing: scripts/setup.sh installs it")
    sources = tracked("*.cc", "*.h")
    assert len(sources) > 100  # the walk found the data plane
    result = run(["clang-format", "--dry-run", "-Werror", *sources])
    assert result.returncode == 0, result.stderr[-5000:]


def test_the_checks_see_a_file_out_of_style(tmp_path):
    # Each checker, given a file out of its style, must say so: a check that can never fail proves nothing.
    (tmp_path / "x.py").write_text("import os\nx=1\n")
    (tmp_path / "x.cc").write_text("int  f( ){return 1;}\n")
    assert (
        run([str(RUFF), "check", "--no-cache", "--config", str(REPO / "ruff.toml"), str(tmp_path / "x.py")]).returncode
        != 0
    )
    assert (
        run(
            [str(RUFF), "format", "--no-cache", "--check", "--config", str(REPO / "ruff.toml"), str(tmp_path / "x.py")]
        ).returncode
        != 0
    )
    assert (
        run(
            ["clang-format", f"--style=file:{REPO / '.clang-format'}", "--dry-run", "-Werror", str(tmp_path / "x.cc")]
        ).returncode
        != 0
    )
