"""Django's ORM: failpoints at its commit and its connections, and its connections lent to ``exhaust_pool``.

Patched on ``BaseDatabaseWrapper`` (every backend's connection class), once
``django.db.backends.base.base`` is imported:

* ``django.before_commit``: before the outermost transaction of an
  ``atomic()`` block commits. What the app published inside the block is
  out; the row it wrote is not visible yet.
* ``django.on_commit``: right after a commit, before the
  ``transaction.on_commit`` callbacks run (also before a callback registered
  outside any transaction, which Django runs at once): the row is committed
  and the enqueue has not happened.
* ``django.after_write``: right after a statement that wrote (``INSERT``,
  ``UPDATE``) ran in Django's autocommit, outside any ``atomic()`` block: the
  statement committed on its own (what ``Model.save()`` and
  ``serializer.save()`` do by default), and nothing else marks the moment;
  the context names the ``table``. An app that saves its job this way and
  queues it next never reaches the two commit failpoints above.
* ``django.connection``: before a connection is opened, or taken from the
  pool (Django 5.1+ ``OPTIONS["pool"]``, psycopg's pool). A thread that
  keeps its connection (``CONN_MAX_AGE``) opens none until it is closed.

Each connection alias is lent to failpoint actions as ``django_db.<alias>``
(and the default alias as ``django_db``, and as ``db_engine`` unless
something else is registered there), so ``exhaust_pool`` works on a Django
app: the calling thread's connection is given back first (to the pool, or
closed, as at the end of a request); then, with a pool, every connection
of the pool is taken and held, and the app's next take waits the pool's
``timeout`` and fails as under real load; without a pool, every connection
the process opens is refused with the server's own "too many clients"
error until the harness lets go.

Every connection also names the task run that writes through it
(``_django_runs``), for ``writes_by_current_attempt``. Persistent
connections (``CONN_MAX_AGE``) are health-checked before reuse: the
harness replaces the database between tests.
"""
from __future__ import annotations

import functools
import re
import threading
from typing import Any, Callable

from harness.failpoints import _registry
from harness.instrument import _django_runs
from harness.instrument._fire import fire

PREFIX = "django_db"
DEFAULT = "db_engine"  # what exhaust_pool takes when no resource is named (a SQLAlchemy engine, where one is)
TAKE_TIMEOUT_S = 0.5  # how long the exhaustion waits for a pool's next connection before calling it empty
REFUSAL = "connection failed: FATAL:  sorry, too many clients already (held by a jobquake failpoint)"

WRITE = re.compile(r'\s*(?:INSERT\s+INTO|UPDATE)\s+"?([\w.]+)"?', re.IGNORECASE)  # the table it writes

_refused: set[str] = set()  # aliases whose new connections are refused in this process
_lock = threading.Lock()


class DjangoConnections:
    """One alias's connections in this process, as ``exhaust_pool`` sees a pool."""

    def __init__(self, alias: str):
        self.alias = alias

    def jobquake_exhaust(self) -> tuple[int, Callable[[], None]]:
        """Empty what this process can get: how many connections are held, and how to give them back."""
        from django.db import connections

        wrapper = connections[self.alias]
        if not wrapper.in_atomic_block:
            # this thread's own connection, kept across transactions, goes back first; close() forgets
            # the on_commit callbacks Django is about to run (we may be called just before them): kept
            pending = wrapper.run_on_commit
            wrapper.close()
            wrapper.run_on_commit = pending
        pool = _pool_of(wrapper)
        if pool is not None:
            held = _take_all(pool)
            return len(held), lambda: [pool.putconn(conn) for conn in held]
        with _lock:
            _refused.add(self.alias)
        return 0, lambda: _refused.discard(self.alias)


def _pool_of(wrapper: Any) -> Any:
    try:
        return getattr(wrapper, "pool", None)  # Django >= 5.1 with OPTIONS["pool"]; None otherwise
    except Exception:  # noqa: BLE001 - a backend without pools, or a pool that cannot be made
        return None


def _take_all(pool: Any) -> list[Any]:
    from psycopg_pool import PoolTimeout

    pool.open()
    held = []
    while True:
        try:
            held.append(pool.getconn(timeout=TAKE_TIMEOUT_S))
        except PoolTimeout:
            return held


def install(base_module: Any) -> None:
    """Patch ``BaseDatabaseWrapper``: commit, its hooks, on_commit outside a transaction, connect."""
    cls = base_module.BaseDatabaseWrapper
    _wrap(cls, "commit", _before_commit)
    _wrap(cls, "run_and_clear_commit_hooks", _after_commit)
    _wrap(cls, "on_commit", _on_commit_at_once)
    _wrap(cls, "connect", _before_connect)
    _wrap(cls, "rollback", _django_runs.forget)
    _wrap(cls, "savepoint_rollback", _django_runs.forget)


def _wrap(cls: Any, name: str, before: Callable[..., None]) -> None:
    original = getattr(cls, name)
    if getattr(original, "_jobquake_patched", False):
        return

    @functools.wraps(original)
    def patched(wrapper: Any, *args: Any, **kwargs: Any) -> Any:
        before(wrapper, *args, **kwargs)
        return original(wrapper, *args, **kwargs)

    patched._jobquake_patched = True  # type: ignore[attr-defined]
    setattr(cls, name, patched)


def _before_commit(wrapper: Any) -> None:
    fire("django.before_commit", alias=wrapper.alias)


def _after_commit(wrapper: Any) -> None:
    fire("django.on_commit", alias=wrapper.alias, callbacks=len(wrapper.run_on_commit))


def _on_commit_at_once(wrapper: Any, func: Any, *args: Any, **kwargs: Any) -> None:
    if not wrapper.in_atomic_block and wrapper.get_autocommit():  # Django calls ``func`` right away
        fire("django.on_commit", alias=wrapper.alias, callbacks=1)


def _before_connect(wrapper: Any) -> None:
    if wrapper.settings_dict.get("CONN_MAX_AGE"):
        # the harness replaces the database between tests: a connection kept across requests is checked
        # before its next use (Django's CONN_HEALTH_CHECKS), as it would be after a server restart
        wrapper.settings_dict["CONN_HEALTH_CHECKS"] = True
    _lend(wrapper.alias)
    _django_runs.watch(wrapper)  # which task run writes through it (jobquake.run)
    if after_write not in wrapper.execute_wrappers:
        wrapper.execute_wrappers.append(after_write)
    fire("django.connection", alias=wrapper.alias, pooled=_pool_of(wrapper) is not None)
    if wrapper.alias in _refused:
        # raised inside Django's error wrapper, so the app gets django.db.OperationalError, as from the server
        raise wrapper.Database.OperationalError(REFUSAL)


def after_write(execute: Any, sql: Any, params: Any, many: bool, context: dict[str, Any]) -> Any:
    """A Django execute wrapper: ``django.after_write`` once an autocommit statement that wrote has run."""
    result = execute(sql, params, many, context)
    wrapper = context["connection"]
    written = WRITE.match(sql) if isinstance(sql, str) else None
    if written and not wrapper.in_atomic_block and wrapper.get_autocommit():
        fire("django.after_write", alias=wrapper.alias, table=written.group(1))
    return result


def _lend(alias: str) -> None:
    name = f"{PREFIX}.{alias}"
    if name in _registry.resources:
        return
    connections = DjangoConnections(alias)
    _registry.register_resource(name, connections)
    if alias == "default":
        _registry.register_resource(PREFIX, connections)
        if DEFAULT not in _registry.resources:
            _registry.register_resource(DEFAULT, connections)
