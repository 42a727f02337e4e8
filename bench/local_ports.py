"""A TCP port free on loopback, for a server a benchmark or test starts (an API server, a control listener, a
metrics endpoint): the kernel picks it, so two runs on one machine never collide."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
