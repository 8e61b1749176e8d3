"""Tell requests a web browser sent from those of programs, so control APIs can refuse them.

The control APIs (the fault proxy's, the paid API's ``/_jobquake`` routes)
listen on loopback without credentials: any program of this machine's user
may drive them, by design. A web page the user happens to visit may not:
it could reach ``127.0.0.1`` through the browser (a DNS-rebinding page, or a
plain cross-site POST). Browsers mark such requests and scripts cannot
remove the marks: ``Origin`` on cross-origin and on every POST, ``Sec-Fetch-*``
on everything, and a ``Mozilla/`` user agent, which is what Toxiproxy checks.
HTTP clients of programs (httpx, requests, aiohttp, curl) send none of them.
"""
from __future__ import annotations

from typing import Mapping

MARKS = ("Origin", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest")


def browser_mark(headers: Mapping[str, str]) -> str | None:
    """The header that shows a browser sent this request, or None for a program's request."""
    for name in MARKS:
        if name in headers:
            return name
    if headers.get("User-Agent", "").startswith("Mozilla/"):
        return "User-Agent"
    return None
