"""Journaled machine changes: undone at the end, and undone by the next run when a run was killed."""

import json
import os

import pytest

from conftest import requires_root
from controlplane.errors import SetupError
from controlplane.machine import changes


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(changes, "STATE_DIR", tmp_path / "state")
    return tmp_path / "state"


@requires_root
def test_changes_are_undone_in_reverse_order(state_dir, tmp_path):
    knob = tmp_path / "knob"
    knob.write_text("950000\n")
    owned = tmp_path / "owned"
    with changes.MachineSession() as session:
        session.write(knob, -1)
        session.write(knob, 5)  # a second change of the same file: the first original wins on the way back
        session.own_directory(owned)
        owned.mkdir()
        assert knob.read_text() == "5"
        assert json.loads((state_dir / "journal.json").read_text())["pid"] == os.getpid()
    assert knob.read_text() == "950000"
    assert not owned.exists()
    assert not (state_dir / "journal.json").exists()


@requires_root
def test_changes_are_undone_when_the_run_raises(state_dir, tmp_path):
    knob = tmp_path / "knob"
    knob.write_text("100")
    with pytest.raises(RuntimeError):
        with changes.MachineSession() as session:
            session.write(knob, 7)
            raise RuntimeError("boom")
    assert knob.read_text() == "100"


@requires_root
def test_next_session_undoes_a_killed_run_and_says_so(state_dir, tmp_path):
    knob = tmp_path / "knob"
    knob.write_text("-1")
    state_dir.mkdir(parents=True)
    stale = {"pid": 999999, "changes": [{"kind": "write", "path": str(knob), "original": "950000"}]}
    (state_dir / "journal.json").write_text(json.dumps(stale))
    with changes.MachineSession() as session:
        assert knob.read_text() == "950000"
        assert any("left by run pid 999999" in note for note in session.notes)


@requires_root
def test_one_run_at_a_time(state_dir):
    with changes.MachineSession():
        with pytest.raises(SetupError, match="another tandem run"):
            changes.MachineSession().__enter__()
