"""The budget audit: the time limits an app declares next to those its running Celery workers enforce.

A budget written in a table means nothing if the worker runs with another
one: a blanket ``--soft-time-limit`` on the worker command, a config default
or a task that forgot its decorator all change what happens at minute two,
and none of them shows in a job's outcome until the long-tail batch arrives.
The audit asks the workers themselves, over the broker (Celery's remote
control), and records what it finds for the ``effective_budget`` checker::

    audit_budgets(jq)  # records "budget ok declared" and "budget ok effective" events

Declared: config key ``budgets`` names ``module:function``, called with the
run's time scale, returning ``{task: {"soft": s, "hard": s}}`` (``None``:
no limit). Effective, per task and worker: the task's own limit
(``inspect registered soft_time_limit time_limit``, which already includes
the app config's defaults) or else the pool's (``inspect stats`` →
``pool.timeouts`` = ``[soft, hard]``, 0 meaning none), which is the order
in which Celery's prefork pool picks them. A limit sent with one message
(``apply_async(time_limit=...)``) is not visible to this audit.
"""
from __future__ import annotations

import inspect as pyinspect
import math
from typing import Any, Iterable, Mapping

from harness.config import load_callable
from harness.errors import ConfigError, HarnessError
from harness.history import vocabulary as v

__all__ = [
    "BudgetAuditError", "DEFAULT_TIMEOUT", "LIMIT_FIELDS", "Limits", "ask_workers", "audit_budgets",
    "declared_budgets", "effective_limits", "parse_registered", "pool_limits", "same_limits", "worst_case",
]

DEFAULT_TIMEOUT = 5.0  # seconds to wait for every worker's reply
LIMIT_FIELDS = {"soft_time_limit": "soft", "time_limit": "hard"}

Limits = dict[str, float | None]  # {"soft": s | None, "hard": s | None}


class BudgetAuditError(HarnessError):
    """The workers could not be asked, or answered something the audit cannot read."""


# -- reading Celery's answers ---------------------------------------------------------------
def parse_registered(lines: Iterable[str]) -> dict[str, Limits]:
    """One worker's ``registered("soft_time_limit", "time_limit")`` answer, per task.

    Celery writes ``"name [soft_time_limit=6.0 time_limit=9.0]"`` and leaves
    out an attribute that is ``None`` (a task without limits is its bare name).
    """
    tasks: dict[str, Limits] = {}
    for line in lines:
        name, _, rest = str(line).strip().partition(" ")
        limits: Limits = {"soft": None, "hard": None}
        for pair in rest.strip().removeprefix("[").removesuffix("]").split():
            key, sep, value = pair.partition("=")
            if not sep:
                raise BudgetAuditError(f"cannot read task attribute {pair!r} in {line!r}")
            if key in LIMIT_FIELDS:
                limits[LIMIT_FIELDS[key]] = _seconds(value, line)
        tasks[name] = limits
    return tasks


def pool_limits(stats: Mapping[str, Any]) -> Limits:
    """The pool-wide limits in one worker's ``stats()`` answer (``pool.timeouts``; 0 is none)."""
    try:
        soft, hard = stats["pool"]["timeouts"]
    except (KeyError, TypeError, ValueError) as exc:
        pool = stats.get("pool") if isinstance(stats, Mapping) else stats
        raise BudgetAuditError(f"worker stats without pool.timeouts (not a prefork pool?): {pool!r}") from exc
    return {"soft": _seconds(soft, "pool.timeouts") or None, "hard": _seconds(hard, "pool.timeouts") or None}


def effective_limits(registered: Iterable[str], stats: Mapping[str, Any]) -> dict[str, Limits]:
    """Per task, the limits one worker enforces: the task's own, else the pool's."""
    if isinstance(registered, (str, Mapping)):  # e.g. {"error": ...} from a worker that refused
        raise BudgetAuditError(f"not a list of registered tasks: {registered!r}")
    pool = pool_limits(stats)
    return {task: {k: own[k] or pool[k] for k in ("soft", "hard")}
            for task, own in parse_registered(registered).items()}


def _seconds(value: Any, where: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise BudgetAuditError(f"not a number of seconds: {value!r} in {where!r}") from exc


# -- asking the workers -------------------------------------------------------------------
def ask_workers(broker_url: str, *, expected: int,
                timeout: float = DEFAULT_TIMEOUT) -> dict[str, dict[str, Limits]]:
    """Per worker, per task, the effective limits; ``expected`` workers must answer within ``timeout``."""
    from celery import Celery

    app = Celery("jobquake-budget-audit", broker=broker_url, set_as_current=False)
    try:
        with app.connection_for_write() as conn:
            # an unreachable broker fails now, not after kombu's default retries
            conn.ensure_connection(max_retries=1, interval_start=0.1)
            # limit: return as soon as every expected worker answered, not at the timeout
            inspector = app.control.inspect(timeout=timeout, limit=expected or None, connection=conn)
            registered = inspector.registered(*LIMIT_FIELDS) or {}
            stats = inspector.stats() or {}
    except Exception as exc:  # noqa: BLE001 - kombu raises many types for "broker unreachable"
        raise BudgetAuditError(f"cannot ask the workers over {broker_url}: {exc!r}") from exc
    finally:
        app.close()
    answered = sorted(set(registered) & set(stats))
    if len(answered) < expected:
        raise BudgetAuditError(
            f"{len(answered)} of {expected} worker(s) answered within {timeout:g}s over {broker_url} "
            f"(registered: {sorted(registered)}, stats: {sorted(stats)})")
    return {worker: effective_limits(registered[worker], stats[worker]) for worker in answered}


def declared_budgets(spec: str, time_scale: float, root: Any = None) -> dict[str, Limits]:
    """Call the ``budgets`` callable (with the time scale if it takes an argument); check its shape."""
    if not spec:
        raise ConfigError("budgets is not set: name the 'module:function' that returns the app's "
                          "declared task budgets ({task: {'soft': s, 'hard': s}})", key="budgets")
    function = load_callable(spec, "budgets", root)
    takes_scale = bool(pyinspect.signature(function).parameters)
    table = function(time_scale) if takes_scale else function()
    if not isinstance(table, Mapping) or not all(isinstance(b, Mapping) for b in table.values()):
        raise ConfigError(f"budgets = {spec!r} returned {table!r}, not {{task: {{'soft', 'hard'}}}}",
                          key="budgets")
    try:
        return {str(task): {k: None if b.get(k) is None else float(b[k]) for k in ("soft", "hard")}
                for task, b in table.items()}
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"budgets = {spec!r}: a limit is not a number of seconds: {exc}",
                          key="budgets") from exc


def same_limits(a: Limits, b: Limits) -> bool:
    """Equal soft and hard limits (``None`` only equals ``None``; floats within rounding)."""
    def same(x: float | None, y: float | None) -> bool:
        return x is None and y is None or x is not None and y is not None and math.isclose(x, y)
    return same(a["soft"], b["soft"]) and same(a["hard"], b["hard"])


def worst_case(declared: Limits | None, per_worker: Mapping[str, Limits]) -> tuple[Limits, str]:
    """The limits of the first worker (by name) that differs from ``declared``, else of the first one."""
    workers = sorted(per_worker)
    differing = [w for w in workers if declared is None or not same_limits(per_worker[w], declared)]
    chosen = differing[0] if differing else workers[0]
    return per_worker[chosen], chosen


# -- the audit --------------------------------------------------------------------------------
def audit_budgets(run: Any, *, timeout: float = DEFAULT_TIMEOUT, expected_workers: int | None = None) -> None:
    """Record the declared and the effective limits of every task in ``run``'s history.

    ``run`` is the scenario's ``jq``: its config gives ``budgets`` and the
    time scale, ``run.redis_url`` the broker, ``run.workers`` how many
    workers must answer. When workers disagree about a task, its effective
    event carries the limits of one that differs from the declaration (so
    the checker sees the worst) and every worker's limits under ``workers``.
    """
    config = run.config
    declared = declared_budgets(config.budgets, config.time_scale, getattr(config, "root", None))
    expected = len(run.workers) if expected_workers is None else expected_workers
    answers = ask_workers(run.redis_url, expected=expected, timeout=timeout)
    for task, limits in declared.items():
        run.history.record(v.BUDGET, "ok", v.DECLARED, data={"task": task, **limits})
    tasks = sorted({task for per_task in answers.values() for task in per_task})
    for task in tasks:
        per_worker = {w: per_task[task] for w, per_task in answers.items() if task in per_task}
        limits, worker = worst_case(declared.get(task), per_worker)
        run.history.record(v.BUDGET, "ok", v.EFFECTIVE, data={
            "task": task, **limits, "worker": worker,
            "agree": all(same_limits(limits, other) for other in per_worker.values()),
            "workers": per_worker})
