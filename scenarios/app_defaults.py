"""Running refapp's workers on the app's own defaults, where the stack's configuration overrides them.

The stack sets ``REFAPP_MODEL_DEADLINE_S`` (so that a scenario can check the
setting is read), which means the budget table's own per-call deadline is
never what a worker uses. ``own_model_deadline`` restarts every worker
without that setting for one scenario, and restores them afterwards, so
the default a real deployment would run on is exercised too.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from refapp import budgets

DEADLINE_SETTING = "REFAPP_MODEL_DEADLINE_S"


def table_model_deadline(jq: Any) -> float:
    """The budget table's per-call deadline, as written (``BUDGETS["model_call"]``), in this run's seconds."""
    row = budgets.BUDGETS["model_call"]
    return float(max(row.seconds * jq.config.time_scale, row.floor))


def _restart_workers(pool: Any) -> None:
    for index in range(len(pool)):
        pool.replace(index)  # a fresh worker with the pool's environment, ready on return


def own_model_deadline(jq: Any) -> Iterator[None]:
    """Generator for a fixture: every worker runs without ``REFAPP_MODEL_DEADLINE_S`` while it is active."""
    pool = jq.workers
    configured = pool.env.pop(DEADLINE_SETTING, None)
    try:
        _restart_workers(pool)
        yield
    finally:
        if configured is not None:
            pool.env[DEADLINE_SETTING] = configured
        _restart_workers(pool)
