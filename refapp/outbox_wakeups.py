"""Wake the relay when an outbox row is written, instead of polling the table many times a second.

A trigger on ``outbox`` (``db.OUTBOX_NOTIFY``) calls ``pg_notify`` for
every insert statement; Postgres delivers it when the writing transaction
commits, never before, so a wake-up always finds its row. The relay keeps
one connection that ``LISTEN``s on the channel and waits on its socket: an
idle relay costs no queries at all.

A notification is only a hint: the relay still finds its rows by querying,
and still polls every ``relay_poll`` in case a notification was missed (the
listening connection was down while a row was written: a database restart).
After (re)connecting, ``wait`` returns at once, since rows may have been
written while nobody listened.
"""
from __future__ import annotations

import logging
import threading
import time

import psycopg
import sqlalchemy as sa

from refapp import settings

log = logging.getLogger("refapp.relay")

CHANNEL = "refapp_outbox"
SLICE_S = 0.25  # the longest a stop request waits for a wait to notice it


class OutboxWakeups:
    """One listening connection; ``wait`` returns on a notification, a (re)connect, a stop, or the timeout."""

    def __init__(self) -> None:
        self._conn: psycopg.Connection | None = None

    def wait(self, timeout: float, stop: threading.Event) -> bool:
        """True when woken (a row was written, or the listener is back); False at the timeout or a stop."""
        deadline = time.monotonic() + timeout
        while not stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._conn is None:
                if self.listen():
                    return True  # rows written while nobody listened: look now
                stop.wait(min(left, SLICE_S))
                continue
            try:
                for _ in self._conn.notifies(timeout=min(left, SLICE_S), stop_after=1):
                    return True
            except psycopg.Error as exc:
                log.warning("outbox listener lost (%s); polling until it is back", type(exc).__name__)
                self.close()
        return False

    def listen(self) -> bool:
        """Open the listening connection; False (the relay polls meanwhile) if the database refuses."""
        try:
            self._conn = psycopg.connect(_libpq_dsn(settings.get().database_url), autocommit=True,
                                         connect_timeout=5)
            self._conn.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error:
            self.close()
            return False
        return True

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None


def _libpq_dsn(url: str) -> str:
    """The SQLAlchemy URL (``postgresql+psycopg://...``) as psycopg's own connection string."""
    return sa.engine.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
