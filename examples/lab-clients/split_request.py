"""A lab client that sends one HTTP GET with its request line cut in two TCP segments, as an attacker cuts one to
slip an attack past a firewall that reads segments one at a time. Prints the answer's status line; exits 0 when an
answer came, 1 when none came within 2 s.

Usage: python3 split_request.py HOST PORT URL"""

import socket
import sys
import time


def main() -> int:
    host, port, url = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    request = f"GET {url} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode()
    cut = len("GET ") + len(url) // 2  # inside the URL
    with socket.create_connection((host, port), timeout=2) as connection:
        # Without Nagle's algorithm, and with a pause between the writes, each half leaves as its own segment.
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.sendall(request[:cut])
        time.sleep(0.2)
        connection.sendall(request[cut:])
        try:
            answer = connection.recv(256)
        except TimeoutError:
            print("no answer within 2 s", file=sys.stderr)
            return 1
    if not answer:
        print("the connection closed without an answer", file=sys.stderr)
        return 1
    print(answer.split(b"\r\n", 1)[0].decode(errors="replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
