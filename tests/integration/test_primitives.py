"""./tandem primitives on this machine (issue 20, part 4): every primitive is measured or said to be unsupported with a
reason, never 0; the memory sweep grows with the working set; the cache is written and read back; nothing is left."""

from __future__ import annotations

import json

from conftest import requires_root, tandem

pytestmark = requires_root


def test_primitives_are_measured_cached_and_reported(tmp_path, monkeypatch, machine_before):
    monkeypatch.setenv("TANDEM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "p.json"
    result = tandem("primitives", "--quick", "--json", str(out), "--plot", str(tmp_path / "p.png"), "--quiet")
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())["results"]
    measured = [
        *results["context_switch"].values(),
        *results["syscall"].values(),
        results["cache_line_transfer"],
        *results["idle_wake"].values(),
        *results["memory"],
        *(results[name] for name in ("yield_handoff", "priority_switch", "user_level_switch")),
    ]
    for entry in measured:
        assert ("unsupported" in entry) != ("median_ns" in entry), entry
        if "median_ns" in entry:
            assert entry["min_ns"] <= entry["median_ns"] <= entry["max_ns"] and entry["median_ns"] > 0, entry
    assert {"cfs", "batch", "rr", "fifo"} == set(results["context_switch"])
    assert "median_ns" in results["syscall"]["getppid"]
    assert set(results["idle_wake"]) == {"1 ms", "10 ms", "100 ms"}
    line_chase = sorted((e["bytes"], e["median_ns"]) for e in results["memory"] if e["stride"] == 64)
    assert line_chase[-1][1] > line_chase[0][1]  # 16 MiB chased at random is slower than 4 KiB, on any machine
    assert (tmp_path / "p.png").stat().st_size > 0
    again = tandem("primitives", "--quiet")  # from the cache: no second measurement
    assert again.returncode == 0 and "context switch, cfs" in again.stdout
    assert "sched_yield hand-off on one core (coop)" in again.stdout
    assert (tmp_path / "cache" / "primitive-latencies.json").exists()
