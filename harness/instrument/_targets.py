"""The broker and database an app process connects to must be the stack's.

An app that reads its broker or database URL from a variable
``[tool.jobquake.env]`` does not set falls back to its own default (often
``redis://localhost:6379/0``): its worker then waits on a queue nobody
feeds, or writes to another database, and the run only times out. Each
Redis connection kombu makes and each PostgreSQL engine SQLAlchemy creates
is compared with the stack's addresses; another one is an error line
(``WRONG_TARGET_MARKER``) naming both URLs, which fails the process's start.
"""
from __future__ import annotations

import functools
from typing import Any, Iterable
from urllib.parse import parse_qs, urlsplit

from harness.instrument import WRONG_TARGET_MARKER, _events

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _address(url: str) -> tuple[str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.hostname or ""), port


class Targets:
    """The stack's broker and database URLs (direct and through the proxy)."""

    def __init__(self, broker: Iterable[str] = (), database: Iterable[str] = ()):
        self.broker = [u for u in broker if u]
        self.database = [u for u in database if u]
        self._reported: set[str] = set()

    @staticmethod
    def _same(url: str, ours: list[str], default_port: int) -> bool:
        host, port = _address(url)
        for known in ours:
            known_host, known_port = _address(known)
            if not host or not known_host:  # a Unix socket is the same server only as the same socket
                if not host and not known_host and _socket(url) == _socket(known):
                    return True
                continue
            same_host = host == known_host or (host in LOOPBACK and known_host in LOOPBACK)
            if same_host and (port or default_port) == (known_port or default_port):
                return True
        return False

    def check(self, kind: str, url: str) -> None:
        """Report ``url`` when it is a broker / database other than the stack's (once per URL)."""
        ours, default_port = (self.broker, 6379) if kind == "broker" else (self.database, 5432)
        if not ours or url in self._reported or self._same(url, ours, default_port):
            return
        self._reported.add(url)
        _events.log(f"{WRONG_TARGET_MARKER} this process connects to the {kind} {_hidden(url)}, not the "
                    f"stack's {_hidden(ours[0])}: the app reads its {kind} URL from a variable "
                    f"[tool.jobquake.env] does not set (`jobquake config` lists what it sets)")

    # -- the libraries -------------------------------------------------------------
    def patch_kombu(self, kombu: Any) -> None:
        from kombu.connection import Connection

        original = Connection.__init__
        if getattr(original, "_jobquake_patched", False):
            return
        targets = self

        @functools.wraps(original)
        def __init__(conn: Any, *args: Any, **kwargs: Any) -> None:
            original(conn, *args, **kwargs)
            try:
                if str(conn.transport_cls).startswith("redis"):
                    vhost = str(conn.virtual_host or "0").lstrip("/")
                    targets.check("broker", f"{conn.transport_cls}://{conn.hostname}:{conn.port or 6379}/{vhost}")
            except Exception:  # noqa: BLE001 - a check must never break the app's connection
                pass

        __init__._jobquake_patched = True  # type: ignore[attr-defined]
        Connection.__init__ = __init__

    def engine_created(self, engine: Any) -> None:
        """Called with every engine SQLAlchemy creates (``_sqlalchemy.py``)."""
        url = engine.url
        if url.get_backend_name() == "postgresql":
            self.check("database", url.render_as_string(hide_password=True))


def _socket(url: str) -> tuple[str, str]:
    """A URL without a host names a Unix socket: by its path (``unix:///run/redis.sock``), or by a
    ``host=`` folder and the database (libpq's ``postgresql://user@/app?host=/run/pg``)."""
    parts = urlsplit(url)
    folder = parse_qs(parts.query).get("host", [""])[-1]
    return folder, parts.path


def _hidden(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":***@", 1)
