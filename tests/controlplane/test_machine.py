"""Journaled machine changes: undone at the end, and undone by the next run when a run was killed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import requires_root
from controlplane.errors import SetupError
from controlplane.machine import changes

REPO = Path(__file__).resolve().parents[2]


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


def _hugepages(counter: str) -> int:
    return int((changes.HUGEPAGES / counter).read_text())


@requires_root
def test_hugepages_two_runs_added_go_back_whichever_ends_first(state_dir, tmp_path):
    """Two runs on one machine (two node agents) each add hugepages; the first to start is killed and cleaned up
    while the second still runs: the second keeps its pages, and once it ends the machine has what it had."""
    first_state = tmp_path / "first"
    reserve = (
        "import sys, time; from controlplane.machine import changes\n"
        "with changes.MachineSession() as session:\n"
        "    session.reserve_hugepages(int(sys.argv[1])); print('ready', flush=True); time.sleep(60)\n"
    )
    before = _hugepages("nr_hugepages")
    environment = os.environ | {"TANDEM_STATE_DIR": str(first_state)}
    first = subprocess.Popen(
        [sys.executable, "-c", reserve, str(_hugepages("free_hugepages") + 2)],
        stdout=subprocess.PIPE, text=True, env=environment, cwd=REPO,
    )  # fmt: skip
    try:
        assert first.stdout.readline().strip() == "ready"
        with changes.MachineSession() as second:
            second.reserve_hugepages(_hugepages("free_hugepages") + 2)
            assert _hugepages("nr_hugepages") == before + 4
            first.kill()
            first.wait()
            cleanup = subprocess.run(
                [sys.executable, "-c", "from controlplane.machine import changes\nwith changes.MachineSession(): pass"],
                env=environment, cwd=REPO, timeout=60,
            )  # fmt: skip
            assert cleanup.returncode == 0
            assert _hugepages("nr_hugepages") == before + 2  # the second run's pages are still there
        assert _hugepages("nr_hugepages") == before
    finally:
        first.kill()
        first.wait()
        (changes.HUGEPAGES / "nr_hugepages").write_text(str(before))
