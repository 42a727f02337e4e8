"""The figures of a lab command, read from what the real tools print here: ping's summary, iperf3's JSON report (TCP,
UDP and an error), curl's --write-out lines and its output's size."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time

import pytest

from bench.local_ports import free_port
from conftest import requires_root
from controlplane.machine.lab_commands import figures

pytestmark = pytest.mark.timeout(60)


def output(command: str) -> str:
    result = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=30)
    return result.stdout


@contextlib.contextmanager
def server(argv: list[str], port: int):
    """A real server on loopback, once it listens on `port` (5 s at most); asked with ss, not by connecting, which
    iperf3 -s -1 would take for its one client."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 5
        while not output(f"ss -Hltn 'sport = :{port}'").strip() and time.monotonic() < deadline:
            time.sleep(0.05)
        yield
    finally:
        process.kill()
        process.wait()


def test_ping_summary():
    command = "ping -c 3 -i 0.2 127.0.0.1"
    found = figures(command, output(command))
    assert found["transmitted"] == 3 and found["received"] == 3 and found["loss_percent"] == 0
    assert 0 < found["rtt_min_ms"] <= found["rtt_avg_ms"] <= found["rtt_max_ms"] and found["rtt_mdev_ms"] >= 0
    # The percentiles come from the replies' own times, which the summary's minimum and maximum bound.
    assert found["rtt_min_ms"] <= found["rtt_p50_ms"] <= found["rtt_p99_ms"] <= found["rtt_max_ms"]


@requires_root
def test_ping_that_gets_no_answer():
    # In a network namespace of its own, towards an address on a veth whose other end nobody answers for.
    network = "ip link add name x0 type veth peer name x1 && ip address add 198.18.0.1/24 dev x0 && ip link set x0 up"
    found = figures(
        "ping", output(f"unshare -n sh -c '{network} && ip link set x1 up && ping -c 2 -i 0.2 -W 0.5 198.18.0.9'")
    )
    assert found == {"transmitted": 2, "received": 0, "loss_percent": 100}


@pytest.mark.parametrize("udp", [False, True], ids=["tcp", "udp"])
def test_iperf3_json_report(udp):
    port = free_port()
    with server(["iperf3", "-s", "-1", "-p", str(port), "-B", "127.0.0.1"], port):
        command = f"iperf3 -c 127.0.0.1 -p {port} -t 1 --json" + (" -u -b 10M" if udp else "")
        found = figures(command, output(command))
    assert found["goodput_bps"] > 0 and found["sent_bps"] > 0, found
    if udp:
        assert 0 <= found["lost_percent"] <= 100 and found["jitter_ms"] >= 0 and "retransmits" not in found
    else:
        assert found["retransmits"] >= 0 and found["mean_rtt_us"] > 0 and "lost_percent" not in found


def test_iperf3_that_reaches_no_server_has_no_figures():
    command = f"iperf3 -c 127.0.0.1 -p {free_port()} -t 1 -J"
    assert '"error"' in output(command)
    assert figures(command, output(command)) == {}


def test_curl_write_out_lines_and_output_size(tmp_path):
    (tmp_path / "page").write_bytes(b"x" * 12345)
    port = free_port()
    argv = [sys.executable, "-m", "http.server", str(port), "-b", "127.0.0.1", "-d", str(tmp_path)]
    with server(argv, port):
        url = f"http://127.0.0.1:{port}/page"
        lines = "code=%{http_code}\\ntime_total=%{time_total}\\ntype=%{content_type}\\n"
        write_out = f"curl -s -o /dev/null -w '{lines}' {url}"
        found = figures(write_out, output(write_out))
        assert found["code"] == 200 and isinstance(found["time_total"], float) and found["time_total"] > 0
        assert found["type"] == "application/octet-stream"
        body = f"curl -s {url}"
        assert figures(body, output(body).encode()) == {"bytes": 12345}


def test_other_programs_have_no_figures():
    assert figures("sleep 0", output("sleep 0")) == {}
    assert figures("python3 -m http.server", "") == {}
