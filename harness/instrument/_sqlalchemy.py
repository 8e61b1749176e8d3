"""SQLAlchemy: the app's engines lent to failpoint actions, and failpoints at commit and checkout.

Every engine that connects is registered as ``db_engine`` (the most recent
one, unless the app registered its own) and as ``db_engine.<n>`` in the
order engines first connect, so ``exhaust_pool`` works on an app that never
heard of failpoints.

``sqlalchemy.after_commit`` fires when a connection that committed is
closed, i.e. back in its pool: that is the moment between "the job row is
written" and whatever the app does next (publish the task), and a pool
exhausted there leaves the app's next checkout to time out. Firing at the
commit itself would be too early: the committing connection is still
checked out, and would go back to the pool right after.

Inside a Celery task, each transaction on Postgres first says which attempt
makes it (``set_config('jobquake.attempt', n, true)``, local to the
transaction), so the harness's state-log trigger records the writing
attempt of every change even in an app that never heard of it. An app that
sets the value itself later in the transaction overrides it.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any

from harness.failpoints import _registry
from harness.instrument import _context
from harness.instrument._fire import fire

DEFAULT = "db_engine"


class EngineRegistry:
    """Engines seen in this process, lent to failpoint actions under stable names."""

    def __init__(self) -> None:
        self._seen: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._ours: Any = None  # the engine we registered as DEFAULT (an app's own stays)

    def saw(self, engine: Any) -> None:
        if engine not in self._seen:
            self._seen[engine] = len(self._seen) + 1
            _registry.register_resource(f"{DEFAULT}.{self._seen[engine]}", engine)
        current = _registry.resources.get(DEFAULT)
        if current is None or current is self._ours:
            _registry.register_resource(DEFAULT, engine)
            self._ours = engine


def install(sqlalchemy: Any) -> None:
    """Listen on every Engine and Pool; wrap Connection.close and Pool.connect."""
    from sqlalchemy import event
    from sqlalchemy.engine import Connection, Engine
    from sqlalchemy.pool import Pool

    engines = EngineRegistry()
    committed: weakref.WeakSet[Any] = weakref.WeakSet()
    event.listen(Engine, "engine_connect", lambda conn, *a: engines.saw(conn.engine))
    event.listen(Engine, "commit", committed.add)
    event.listen(Engine, "begin", _attempt_pending)
    event.listen(Engine, "before_cursor_execute", _say_attempt)
    _after_close(Connection, committed, engines)
    _before_checkout(Pool)


ATTEMPT_PENDING = "jobquake_attempt_pending"


def _attempt_pending(conn: Any) -> None:
    """A transaction begins: remember the running task's attempt, to be said at its first statement."""
    job = _context.current()
    if job is not None and job.attempt is not None and conn.dialect.name == "postgresql":
        conn.info[ATTEMPT_PENDING] = int(job.attempt)


def _say_attempt(conn: Any, cursor: Any, statement: Any, parameters: Any, context: Any,
                 executemany: bool) -> None:
    """Before the transaction's first statement: set ``jobquake.attempt`` for this transaction only."""
    attempt = conn.info.pop(ATTEMPT_PENDING, None)
    if attempt is not None:
        # an int, formatted by us: no quoting question; the driver's own paramstyle is not needed
        cursor.execute(f"SELECT set_config('jobquake.attempt', '{int(attempt)}', true)")


def _after_close(connection_cls: Any, committed: Any, engines: EngineRegistry) -> None:
    original = connection_cls.close
    if getattr(original, "_jobquake_patched", False):
        return

    @functools.wraps(original)
    def close(conn: Any) -> None:
        original(conn)
        if conn in committed:
            committed.discard(conn)
            engines.saw(conn.engine)
            fire("sqlalchemy.after_commit", engine=_url(conn.engine))

    close._jobquake_patched = True  # type: ignore[attr-defined]
    connection_cls.close = close


def _before_checkout(pool_cls: Any) -> None:
    original = pool_cls.connect
    if getattr(original, "_jobquake_patched", False):
        return

    @functools.wraps(original)
    def connect(pool: Any) -> Any:
        fire("sqlalchemy.pool_checkout", pool=type(pool).__name__)
        return original(pool)

    connect._jobquake_patched = True  # type: ignore[attr-defined]
    pool_cls.connect = connect


def _url(engine: Any) -> str:
    try:
        return engine.url.render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a label only
        return repr(engine)
