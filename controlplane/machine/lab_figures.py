"""The figures a lab command's output holds, read by the program that wrote it: iperf3's JSON report, ping's summary,
the key=value lines of curl's --write-out; nothing for any other program."""

from __future__ import annotations

import json
import math
import re
import shlex
from pathlib import PurePath

# iputils ping's summary: "5 packets transmitted, 5 received, +2 errors, 0% packet loss, time 804ms" and
# "rtt min/avg/max/mdev = 0.030/0.045/0.061/0.010 ms".
_PING_COUNTS = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received.*?([\d.]+)% packet loss")
_PING_RTT = re.compile(r"= ([\d.]+)/([\d.]+)/([\d.]+)(?:/([\d.]+))? ms")
_PING_REPLY = re.compile(r"time=([\d.]+) ms")
_KEY_VALUE = re.compile(r"^([A-Za-z_][\w.-]*)=(.*)$")
_INTEGER = re.compile(r"[-+]?\d+")
_DECIMAL = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
# curl's --write-out, alone, with its format attached (-w'...', --write-out=...), or last in a cluster (-sSw).
_WRITE_OUT = re.compile(r"--write-out(=.*)?|-[A-Za-z]*w.*")


def figures(command: str, stdout: str | bytes) -> dict:
    """What `command` (as run, placeholders substituted) reported on `stdout`, by its program: numbers under names that
    say what they are; {} for a program it does not know or output it cannot read."""
    try:
        words = shlex.split(command)
    except ValueError:
        return {}
    if not words:
        return {}
    size = len(stdout) if isinstance(stdout, bytes) else len(stdout.encode())
    text = stdout.decode(errors="replace") if isinstance(stdout, bytes) else stdout
    program = PurePath(words[0]).name
    if program == "iperf3":
        return _iperf3(text)
    if program == "ping":
        return _ping(text)
    if program == "curl":
        return _curl(words, text, size)
    return {}


def _iperf3(text: str) -> dict:
    """From the client's --json report (a report without it, or with an error, has no figures)."""
    try:
        end = json.loads(text)["end"]
    except (ValueError, KeyError, TypeError):
        return {}
    found = {}
    received, sent = end.get("sum_received", {}), end.get("sum_sent", {})
    if "bits_per_second" in received:
        found["goodput_bps"] = received["bits_per_second"]
    if "bits_per_second" in sent:
        found["sent_bps"] = sent["bits_per_second"]
    if "retransmits" in sent:  # TCP only
        found["retransmits"] = sent["retransmits"]
    udp = received if "lost_percent" in received else end.get("sum", {})
    for key in ("lost_percent", "jitter_ms"):
        if key in udp:
            found[key] = udp[key]
    # Each TCP stream's sender says its mean round-trip time in microseconds (Linux's tcp_info).
    rtts = [s["sender"]["mean_rtt"] for s in end.get("streams", []) if "mean_rtt" in s.get("sender", {})]
    if rtts:
        found["mean_rtt_us"] = sum(rtts) / len(rtts)
    return found


def _ping(text: str) -> dict:
    found = {}
    counts = _PING_COUNTS.search(text)
    if counts:
        found.update(transmitted=int(counts[1]), received=int(counts[2]), loss_percent=float(counts[3]))
    rtt = _PING_RTT.search(text)
    if rtt:
        found.update(rtt_min_ms=float(rtt[1]), rtt_avg_ms=float(rtt[2]), rtt_max_ms=float(rtt[3]))
        if rtt[4] is not None:
            found["rtt_mdev_ms"] = float(rtt[4])
    # Each reply's own time (the summary has no percentiles): the median and the 99th, nearest rank.
    replies = sorted(float(time) for time in _PING_REPLY.findall(text))
    if replies:
        found["rtt_p50_ms"] = replies[(len(replies) - 1) // 2]
        found["rtt_p99_ms"] = replies[min(len(replies) - 1, math.ceil(0.99 * len(replies)) - 1)]
    return found


def _curl(words: list[str], text: str, size: int) -> dict:
    """With --write-out, the key=value lines it was told to write (numbers where they are numbers); without it, how
    many bytes curl wrote (the response, unless it went to a file)."""
    if not any(_WRITE_OUT.fullmatch(word) for word in words[1:]):
        return {"bytes": size}
    found = {}
    for line in text.splitlines():
        pair = _KEY_VALUE.match(line.strip())
        if pair:
            found[pair[1]] = _number(pair[2])
    return found


def _number(value: str) -> int | float | str:
    if _INTEGER.fullmatch(value):
        return int(value)
    if _DECIMAL.fullmatch(value):
        return float(value)
    return value
