"""The command line's output when its reader goes away: a quiet exit, no internal error."""

from __future__ import annotations

import subprocess

from conftest import REPO


def test_a_reader_that_stops_reading_is_not_an_internal_error():
    # `./tandem nfs | head -1`: the reader has closed its end before Tandem writes.
    process = subprocess.Popen([str(REPO / "tandem"), "nfs"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdout.close()
    stderr = process.stderr.read()
    process.wait(timeout=60)
    assert process.returncode == 141, stderr  # as a shell reports a process killed by SIGPIPE
    assert "internal error" not in stderr and "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
