"""Which token files the control API's listeners and the operator read (controlplane/launch/control_server.py): the
owner's alone, or group-readable for a group this process is in (a Kubernetes Secret in a non-root pod: root's file,
mode 0440, its group the pod's fsGroup), never writable by the group or readable by anyone else."""

from __future__ import annotations

import os

import pytest

from controlplane.errors import SetupError
from controlplane.launch.control_server import read_token

TOKEN = "0123456789abcdef0123456789abcdef"


def token_file(tmp_path, mode: int, group: int | None = None):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    if group is not None:
        os.chown(path, -1, group)
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o600, 0o400, 0o640, 0o440])
def test_the_owners_file_or_one_our_group_may_read_is_read(tmp_path, mode):
    assert read_token(token_file(tmp_path, mode, os.getegid())) == TOKEN


@pytest.mark.parametrize("mode", [0o644, 0o604, 0o660, 0o620])
def test_a_file_others_may_read_or_the_group_may_write_is_refused(tmp_path, mode):
    with pytest.raises(SetupError, match="others may read it"):
        read_token(token_file(tmp_path, mode, os.getegid()))


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to a group this process is not in needs root")
def test_a_file_a_group_we_are_not_in_may_read_is_refused(tmp_path):
    stranger = max([os.getegid(), *os.getgroups()]) + 4242
    with pytest.raises(SetupError, match="others may read it"):
        read_token(token_file(tmp_path, 0o640, stranger))
