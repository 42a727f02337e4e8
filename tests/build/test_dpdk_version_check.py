"""meson.build's DPDK check: the build configures with the 22.11 series only, and otherwise stops naming the version
found and its libdpdk.pc. Each test configures the repository into its own temporary build directory (a few seconds).

Run alone with: .venv/bin/python -m pytest tests/build -q"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("meson") is None or shutil.which("pkg-config") is None,
                                reason="meson or pkg-config is missing (./scripts/setup.sh installs them)")

# Enough of a libdpdk.pc for pkg-config to report a version; the check refuses it before anything links against it.
FAKE_PC = """\
Name: DPDK
Description: a fake DPDK for Tandem's version check
Version: {version}
Libs: -lrte_eal
Cflags: -I/nonexistent
"""


@pytest.fixture
def scratch():
    # Not pytest's tmp_path: it keeps the last runs' directories, and these hold build trees and a fake libdpdk.pc.
    with tempfile.TemporaryDirectory(prefix="tandem-dpdk-check-") as directory:
        yield Path(directory)


def meson_setup(build_dir: Path, **env: str) -> subprocess.CompletedProcess:
    # The source tree is only read: meson writes into the build directory, which lies outside the repository.
    return subprocess.run(["meson", "setup", str(build_dir), str(REPO)], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("version", ["23.11.0", "21.11.5"])
def test_another_dpdk_series_stops_the_build_naming_what_was_found(scratch, version):
    # Only the child's PKG_CONFIG_PATH names the fake: it is searched before pkg-config's defaults, so it wins over
    # the system's libdpdk.pc there and is seen by nothing else.
    pc_dir = scratch / "pkgconfig"
    pc_dir.mkdir()
    (pc_dir / "libdpdk.pc").write_text(FAKE_PC.format(version=version))
    result = meson_setup(scratch / "build", PKG_CONFIG_PATH=str(pc_dir))
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert f"Tandem needs DPDK 22.11 (LTS, Debian 12's libdpdk-dev); found libdpdk {version} from {pc_dir / 'libdpdk.pc'}" in output


def test_no_dpdk_at_all_stops_the_build_saying_so(scratch):
    empty = scratch / "pkgconfig"
    empty.mkdir()
    # PKG_CONFIG_LIBDIR replaces pkg-config's default directories: with it empty, no libdpdk.pc is found anywhere.
    result = meson_setup(scratch / "build", PKG_CONFIG_PATH="", PKG_CONFIG_LIBDIR=str(empty))
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Tandem needs DPDK 22.11 (LTS, Debian 12's libdpdk-dev): pkg-config finds no libdpdk.pc" in output


def test_the_installed_dpdk_is_22_11_and_passes(scratch):
    result = meson_setup(scratch / "build")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Message: DPDK 22.11." in output
