"""Which task run writes through a Django connection: the session setting ``jobquake.run``.

Django apps rarely say which attempt they are on each write, so the
instrumentation names the running Celery task run (its task id and its
attempt, as counted across processes) in the session setting
``jobquake.run`` of every connection a task writes through. The state-log
trigger turns that into ``writer_attempt``: a run whose write raised the
row's attempt claimed that attempt, and its later writes to the job are
that attempt's (``writes_by_current_attempt`` then judges them).

The setting is session-wide, so it also covers Django's autocommit
statements; it is set before a statement only when the connection's value
differs (once per task run and connection). A rollback may undo it, so
Django's rollbacks forget what was set. Outside a task nothing is set, and
a connection that was tagged, or comes from a pool, is set back to ''.
"""
from __future__ import annotations

from typing import Any

from harness.instrument import _context

SET = "SELECT set_config('jobquake.run', %s, false)"
TAGGED = "_jobquake_run"  # on Django's DatabaseWrapper: (the DB-API connection, the run it is set to)
INERROR = 3  # psycopg's TransactionStatus.INERROR: a statement now would only fail


def run_tag() -> str:
    """The running task run, or '' outside a task."""
    job = _context.current()
    return f"{job.task_id}:{job.attempt or 0}" if job is not None else ""


def name_the_run(execute: Any, sql: Any, params: Any, many: bool, context: dict[str, Any]) -> Any:
    """A Django execute wrapper: the connection's ``jobquake.run`` is this run's before the statement."""
    wrapper = context["connection"]
    raw, wanted = wrapper.connection, run_tag()
    raw_set, value = getattr(wrapper, TAGGED, None) or (None, None)
    if raw_set is not raw:
        # a fresh server connection has nothing set; one from a pool may carry what another thread set
        value = None if getattr(raw, "_pool", None) is not None else ""
    if value != wanted and _usable(raw):
        context["cursor"].cursor.execute(SET, (wanted,))
        value = wanted
    setattr(wrapper, TAGGED, (raw, value))
    return execute(sql, params, many, context)


def forget(wrapper: Any, *args: Any, **kwargs: Any) -> None:
    """Before a rollback (of a transaction or to a savepoint): what was set in it may be undone."""
    setattr(wrapper, TAGGED, None)


def watch(wrapper: Any) -> None:
    """Wrap every statement of this Django connection (once per DatabaseWrapper)."""
    if name_the_run not in wrapper.execute_wrappers:
        wrapper.execute_wrappers.append(name_the_run)


def _usable(raw: Any) -> bool:
    status = getattr(getattr(raw, "info", None), "transaction_status", None)
    return status is None or int(status) != INERROR
