"""The per-session token of the control APIs (the paid API's ``/_jobquake`` routes, the fault proxy's API).

Both listen on loopback, where every local user can reach them: one request
from another user could arm a mode or a toxic and flip a verdict. So each
server is started with a token read from a file in the private run folder
(never from its command line, which every user can read) and refuses, with
401, every control request that does not carry it in ``X-Jobquake-Token``;
only its health check (``/_jobquake/health``, ``/version``) answers anyone,
since it tells nothing and changes nothing. The harness's own clients send
the token; a real Toxiproxy ignores the header. A server started without a
token (``python -m harness.paidapi`` by hand) answers everyone, as before.
"""
from __future__ import annotations

import hmac
from typing import Mapping

HEADER = "X-Jobquake-Token"


def read_token(path: str | None) -> str | None:
    """The token in ``path`` (None: no token, the API is open)."""
    if not path:
        return None
    with open(path, encoding="ascii") as fh:
        token = fh.read().strip()
    if not token:
        raise ValueError(f"{path}: the control token file is empty")
    return token


def authorised(headers: Mapping[str, str], token: str | None) -> bool:
    """True when the request carries ``token`` (or the server has none)."""
    if token is None:
        return True
    return hmac.compare_digest(headers.get(HEADER, "").encode(), token.encode())


def token_headers(token: str | None) -> dict[str, str]:
    """What a client adds to every request."""
    return {} if token is None else {HEADER: token}
