"""SQLAlchemy pools: which connections this process holds checked out, and which only the GC gave back.

A code path that forgets to return its connection (an error path that skips
``close()``, an early ``return``) leaves it checked out of its pool, and the
transaction on it keeps its locks, until the garbage collector finds the
connection, if ever. The pool's ``checkout`` / ``checkin`` events show
both. SQLAlchemy hands a forgotten connection back from a weakref callback
on its proxy object, so a checkin that comes when our own weak reference to
that proxy is already dead was the garbage collector's doing, not the
code's; a checkout with no checkin yet is still out.

What is out is kept in ``pools/<pid>.json`` in the run's instrumentation
folder, rewritten at every checkout and checkin (one small write)::

    {"pid": 81, "started": <ticks>, "process": "worker1", "checkouts": 412, "last": <monotonic>,
     "out": [{"since": <monotonic>, "site": "refapp/sweep.py:112 _row_transaction", "backend_pid": 9031}]}

and a connection the garbage collector returned is an event,
``connection_collected`` (where it was checked out, for how long). ``site``
is the first frame outside SQLAlchemy, the standard library and this
package: the app's own line that took the connection.
"""
from __future__ import annotations

import json
import os
import sys
import sysconfig
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

from harness.instrument import ENV_PROCESS, _events

POOLS_DIR = "pools"
_OURS = os.path.dirname(os.path.abspath(__file__))


@dataclass
class _Checkout:
    proxy: weakref.ref
    since: float
    site: str
    backend_pid: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"since": round(self.since, 6), "site": self.site, "backend_pid": self.backend_pid}


def _not_app_prefixes() -> tuple[str, ...]:
    import sqlalchemy

    paths = sysconfig.get_paths()
    stdlib = [paths[key] for key in ("stdlib", "platstdlib") if paths.get(key)]
    return tuple({os.path.dirname(os.path.abspath(sqlalchemy.__file__)), _OURS, *stdlib})


def _site(skip: tuple[str, ...]) -> str:
    """``file:line function`` of the first caller outside ``skip`` (the app's line), else the innermost."""
    frame = sys._getframe(2)
    first = frame
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(skip) and not path.startswith("<"):
            return f"{_short(path)}:{frame.f_lineno} {frame.f_code.co_name}"
        frame = frame.f_back
    return f"{_short(first.f_code.co_filename)}:{first.f_lineno} {first.f_code.co_name}" if first else "?"


def _short(path: str) -> str:
    cwd = os.getcwd()
    return os.path.relpath(path, cwd) if path.startswith(cwd + os.sep) else path


def _started() -> int | None:
    """This process's start time in clock ticks since boot (``/proc/self/stat``), None where there is no /proc."""
    try:
        with open("/proc/self/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _backend_pid(dbapi_connection: Any) -> int | None:
    """The database server's pid for this connection (psycopg 3, psycopg2), without a query."""
    try:
        info = getattr(dbapi_connection, "info", None)
        pid = getattr(info, "backend_pid", None)
        if pid is None and hasattr(dbapi_connection, "get_backend_pid"):
            pid = dbapi_connection.get_backend_pid()
        return int(pid) if pid else None
    except Exception:  # noqa: BLE001 - a label only: a driver we do not know has none
        return None


class PoolWatch:
    """This process's checked-out connections, written to its file in the pools folder."""

    def __init__(self, folder: str | None):
        self.folder = folder
        self.process = os.environ.get(ENV_PROCESS, "")
        self.lock = threading.Lock()
        self.out: dict[int, _Checkout] = {}
        self.checkouts = 0
        self.last: float | None = None
        self.pid = -1
        self.fd = -1
        self.started: int | None = None  # this process's start (clock ticks): a pid reused later is not it
        self.skip: tuple[str, ...] = ()

    def install(self, sqlalchemy: Any) -> None:
        from sqlalchemy import event
        from sqlalchemy.pool import Pool

        self.skip = _not_app_prefixes()
        event.listen(Pool, "checkout", self.checkout)
        event.listen(Pool, "checkin", self.checkin)
        event.listen(Pool, "detach", self.detach)
        os.register_at_fork(after_in_child=self.forked)

    def forked(self) -> None:
        """A child forked without exec: its parent's checkouts are not its own; its file is its own."""
        self.lock = threading.Lock()
        self.out, self.checkouts, self.last, self.pid, self.fd = {}, 0, None, -1, -1

    def checkout(self, dbapi_connection: Any, record: Any, proxy: Any) -> None:
        entry = _Checkout(weakref.ref(proxy), time.monotonic(), _site(self.skip), _backend_pid(dbapi_connection))
        with self.lock:
            self.out[id(record)] = entry
            self.checkouts += 1
            self.last = entry.since
            self._write()

    def checkin(self, dbapi_connection: Any, record: Any) -> None:
        with self.lock:
            entry = self.out.pop(id(record), None)
            if entry is None:
                return
            self._write()
        if entry.proxy() is None:  # the proxy died first: the garbage collector returned it
            held = time.monotonic() - entry.since
            _events.record(self.folder, "ok", "connection_collected", process=self.process, site=entry.site,
                           since=entry.since, held_s=round(held, 6), backend_pid=entry.backend_pid)

    def detach(self, dbapi_connection: Any, record: Any) -> None:
        """Taken out of the pool for good by the app (``Connection.detach()``): no longer the pool's to lose."""
        with self.lock:
            if self.out.pop(id(record), None) is not None:
                self._write()

    def _write(self) -> None:
        """Rewrite this process's file (called with the lock held); a failure must never reach the app."""
        if not self.folder:
            return
        try:
            if self.pid != os.getpid():
                path = os.path.join(self.folder, POOLS_DIR, f"{os.getpid()}.json")
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                self.fd, self.pid, self.started = os.open(path, flags, 0o660), os.getpid(), _started()
            last = None if self.last is None else round(self.last, 6)
            data = json.dumps({"pid": self.pid, "started": self.started, "process": self.process,
                               "checkouts": self.checkouts, "last": last,
                               "out": [e.to_dict() for e in self.out.values()]}).encode()
            os.pwrite(self.fd, data, 0)
            os.ftruncate(self.fd, len(data))
        except OSError:
            self.folder = None  # no pools folder (an older harness): stop trying, say nothing


SESSION_PREFIX = "jobquake:"  # application_name of an app process's database sessions: jobquake:<process>


def name_sessions() -> None:
    """Name this process's Postgres sessions after it (libpq reads ``PGAPPNAME``), unless the app names them.

    ``pg_stat_activity`` then tells the app's sessions from the harness's own,
    by name, whatever driver opens them through libpq.
    """
    process = os.environ.get(ENV_PROCESS)
    if process:
        os.environ.setdefault("PGAPPNAME", f"{SESSION_PREFIX}{process}"[:63])
