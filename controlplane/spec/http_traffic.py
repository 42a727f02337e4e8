"""HTTP traffic for the μNFs that read requests: which URL each flow's requests carry. A chain's flows cycle in
order, so giving the first round(flows x malicious) flows an attack URL makes exactly that share of every cycle
of packets malicious, and a run's expected drops are known in advance; the next round(flows x other) flows send
bare TCP segments (no request), which an HTTP classifier sends its other way."""

from __future__ import annotations

# An ordinary site, when the spec names no URLs.
DEFAULT_URLS = [
    "/",
    "/index.html",
    "/products?category=books&page=2",
    "/search?q=union+station+schedule",
    "/img/logo.png",
    "/cart/add?item=1234&qty=1",
    "/books/o'reilly-guide",
    "/api/v1/orders/42",
]
# SQL-injection attempts, percent-encoded as a client sends them; validate_url's built-in signatures catch each.
ATTACK_URLS = [
    "/item?id=1%27%20OR%20%271%27%3D%271",
    "/search?q=x%27+UNION+SELECT+user,pass+FROM+users--",
    "/p?id=1;+DROP+TABLE+users",
    "/login?user=admin%27--",
    "/p?id=1+AND+SLEEP(5)",
]
MAX_URL_BYTES = 1024  # a request must fit one frame with its headers
MAX_HTTP_FLOWS = 65536  # one ready frame per flow


def attack_flows(flows: int, malicious: float) -> int:
    """How many of a chain's flows carry attacks."""
    return round(flows * malicious)


def flow_urls(urls: list[str], malicious: float, flows: int, other: float = 0.0) -> list[str]:
    """The URL of each flow: the first attack_flows() flows cycle through the attacks, the next round(flows x other)
    send no request (""), the rest cycle through `urls`."""
    attacks, bare = attack_flows(flows, malicious), round(flows * other)

    def url(f: int) -> str:
        if f < attacks:
            return ATTACK_URLS[f % len(ATTACK_URLS)]
        if f < attacks + bare:
            return ""
        return urls[(f - attacks - bare) % len(urls)]

    return [url(f) for f in range(flows)]


def url_problem(url: str) -> str | None:
    """Why `url` cannot be a request's URL, or None."""
    if not url.startswith("/"):
        return f"must start with '/', got {url!r}"
    if any(c.isspace() or ord(c) < 0x21 or ord(c) > 0x7E for c in url):
        return f"must be printable ASCII without spaces (percent-encode them), got {url!r}"
    if len(url) > MAX_URL_BYTES:
        return f"must be at most {MAX_URL_BYTES} bytes, got {len(url)}"
    return None
