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

Every PostgreSQL connection (psycopg, psycopg2) an engine opens is named
``jobquake:<process>:<pid>`` (``application_name``), unless the app names
its connections itself: the state-log trigger records which process wrote
each change and each heartbeat, and ``pg_stat_activity`` shows whose
session is whose.

Which attempt made a write (the session setting ``jobquake.attempt`` the
state-log trigger records) is left to the app: Celery's delivery count is not
the app's own attempt number (an app that claims a job by raising its attempt
column, or a sweeper that re-sends it, numbers attempts its own way), so
saying it for the app would make a correct app's writes look late.
"""
from __future__ import annotations

import functools
import os
import weakref
from typing import Any, Callable

from harness.failpoints import _registry
from harness.instrument import ENV_PROCESS
from harness.instrument._fire import fire

DEFAULT = "db_engine"
LIBPQ_DRIVERS = ("psycopg", "psycopg2")  # drivers that take libpq's application_name as a connect parameter


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


def install(sqlalchemy: Any, created: Callable[[Any], None] | None = None) -> None:
    """Listen on every Engine and Pool; wrap Connection.close and Pool.connect.

    ``created``: called with every engine the app creates, and again when one first connects.
    """
    from sqlalchemy import event
    from sqlalchemy.engine import Connection, Engine
    from sqlalchemy.pool import Pool

    engines = EngineRegistry()
    committed: weakref.WeakSet[Any] = weakref.WeakSet()
    event.listen(Engine, "engine_connect", lambda conn, *a: engines.saw(conn.engine))
    if created is not None:
        _on_create(sqlalchemy, created)
        event.listen(Engine, "engine_connect", lambda conn, *a: created(conn.engine))
    event.listen(Engine, "commit", committed.add)
    event.listen(Engine, "do_connect", _name_connection)
    _after_close(Connection, committed, engines)
    _before_checkout(Pool)


def _on_create(sqlalchemy: Any, created: Callable[[Any], None]) -> None:
    """Wrap ``create_engine`` where apps import it from (``sqlalchemy``, ``sqlalchemy.engine``)."""
    import sqlalchemy.engine as engine_module

    original = engine_module.create_engine
    if getattr(original, "_jobquake_patched", False):
        return

    @functools.wraps(original)
    def create_engine(*args: Any, **kwargs: Any) -> Any:
        engine = original(*args, **kwargs)
        try:
            created(engine)
        except Exception:  # noqa: BLE001 - a check must never break the app's engine
            pass
        return engine

    create_engine._jobquake_patched = True  # type: ignore[attr-defined]
    engine_module.create_engine = create_engine
    sqlalchemy.create_engine = create_engine


def application_name(pid: int | None = None) -> str:
    """The name this process's database sessions carry: ``jobquake:<process>:<pid>``."""
    process = os.environ.get(ENV_PROCESS) or "app"
    return f"jobquake:{process}:{os.getpid() if pid is None else pid}"[:63]  # Postgres keeps 63 bytes


def _name_connection(dialect: Any, conn_rec: Any, cargs: Any, cparams: dict[str, Any]) -> None:
    """Name a new connection after this process (at connect time: a forked child has its own pid)."""
    if getattr(dialect, "driver", None) in LIBPQ_DRIVERS:
        cparams.setdefault("application_name", application_name())


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
