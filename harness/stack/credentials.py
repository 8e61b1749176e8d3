"""Per-session secrets of the servers: a random password, and Postgres's SCRAM verifier of it.

The verifier (``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>``)
is what Postgres stores; handing it over instead of the password keeps the
password out of server logs, ``pg_stat_activity`` and command lines (a
``docker exec`` argument is visible to every local user). A verifier does not
let anyone log in: SCRAM needs the client key, which it does not contain.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

# Postgres's default is 4096: key stretching that slows the guessing of a password people chose.
# A session password is 128 random bits, which no number of guesses finds, and every client
# pays the iterations at each connection (~3 ms at 4096), so it gets few.
SCRAM_ITERATIONS = 16


def session_password() -> str:
    """A fresh random password (hex: safe in URLs and config files unquoted)."""
    return secrets.token_hex(16)


def scram_verifier(password: str, *, salt: bytes | None = None, iterations: int = SCRAM_ITERATIONS) -> str:
    """The SCRAM-SHA-256 verifier Postgres stores for ``password`` (RFC 5802 / 7677)."""
    salt = os.urandom(16) if salt is None else salt
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = lambda raw: base64.b64encode(raw).decode()  # noqa: E731
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def control_token() -> str:
    """A fresh token for a control API (the paid API's ``/_jobquake`` routes, the fault proxy's API)."""
    return secrets.token_hex(16)


def write_secret(path: Path, text: str, mode: int = 0o600) -> None:
    """Write ``text`` to ``path`` (in a private folder) without following a planted symlink, mode ``mode``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fd, mode)
        fh.write(text)
