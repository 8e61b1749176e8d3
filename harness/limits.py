"""Static evidence an app declares or keeps, read after every scenario: its layered limits, its saved results.

**Limits** (config ``limits = "module:function"``): the app's own answer to
"which limit sits inside which", called as ``function(time_scale, env)``
with the run's time scale and the environment its processes run with (so a
setting such as a per-call deadline, or a mutant switch, is seen as the app
sees it). It returns::

    {"chains": {name: [[limit, seconds | None], ...]},   # innermost first, see checks/nesting.py
     "step_blocked": seconds,                           # bound on one step's time blocked on the
                                                        # provider across every attempt (checks/end_to_end.py)
     "attempt_blocked": seconds,                        # the same within one attempt (optional)
     "heartbeat_stale": seconds,                        # an attempt whose heartbeat is older is dead
                                                        # by the app's rule (optional; checks/live_attempts.py)
     "writes_name_attempt": bool,                       # every state write an attempt makes sets
                                                        # jobquake.attempt: one without it is no attempt's
     "queries_per_item": {table or "*": statements}}    # statements per item of a batch, per table
                                                        # (optional; checks/work.py)

recorded as one ``budget ok limits`` event. **Results** (config
``results_query``): SQL returning the app's saved paid-step results, one
row each — ``job_id, step, attempt, call_id, saved_at`` (epoch seconds)
and optionally ``committed_at`` — recorded as ``write ok step_saved``
events (unless the scenario recorded its own), for the provenance check.
"""
from __future__ import annotations

import inspect
import os
import time
from typing import Any, Mapping

import psycopg

from harness.checks.end_to_end import LIMITS
from harness.config import load_callable
from harness.errors import ConfigError
from harness.evidence.clock import wall_to_monotonic
from harness.history import vocabulary as v
from harness.history.timing import committed_data


def _check_shape(spec: str, declared: Any) -> dict[str, Any]:
    if not isinstance(declared, Mapping):
        raise ConfigError(f"limits = {spec!r} returned {declared!r}, not {{'chains': ..., 'step_blocked': ...}}",
                          key="limits")
    chains = declared.get("chains") or {}
    for name, layers in chains.items():
        if not all(isinstance(layer, (list, tuple)) and len(layer) == 2 and
                   (layer[1] is None or isinstance(layer[1], (int, float))) for layer in layers):
            raise ConfigError(f"limits = {spec!r}: chain {name!r} must be [[name, seconds or None], ...], "
                              f"got {layers!r}", key="limits")
    blocked = declared.get("step_blocked")
    if blocked is not None and not isinstance(blocked, (int, float, Mapping)):
        raise ConfigError(f"limits = {spec!r}: step_blocked must be seconds or {{step: seconds}}, got {blocked!r}",
                          key="limits")
    stale = declared.get("heartbeat_stale")
    if stale is not None and (not isinstance(stale, (int, float)) or stale <= 0):
        raise ConfigError(f"limits = {spec!r}: heartbeat_stale must be positive seconds, got {stale!r}", key="limits")
    return {"chains": {str(k): [[str(n), s] for n, s in layers] for k, layers in chains.items()},
            "step_blocked": blocked, "attempt_blocked": declared.get("attempt_blocked"), "heartbeat_stale": stale,
            "writes_name_attempt": bool(declared.get("writes_name_attempt")),
            "queries_per_item": _per_item_budgets(spec, declared.get("queries_per_item"))}


def _per_item_budgets(spec: str, budgets: Any) -> dict[str, float] | None:
    """``{table or "*": statements per item}`` as declared, checked; None when the app declares none."""
    if budgets is None:
        return None
    if not isinstance(budgets, Mapping) or not all(
            isinstance(k, str) and isinstance(b, (int, float)) and b >= 0 for k, b in budgets.items()):
        raise ConfigError(f"limits = {spec!r}: queries_per_item must be {{table or '*': statements per item}}, "
                          f"got {budgets!r}", key="limits")
    return {str(k): float(b) for k, b in budgets.items()}


def declared_limits(spec: str, time_scale: float, env: Mapping[str, str], root: Any = None) -> dict[str, Any]:
    """Call the app's ``limits`` function and check the shape of its answer."""
    function = load_callable(spec, "limits", root)
    takes = len(inspect.signature(function).parameters)
    declared = function(time_scale, env) if takes >= 2 else function(time_scale) if takes else function()
    return _check_shape(spec, declared)


def app_env(stack: Any) -> dict[str, str]:
    """The environment the app's processes run with: ours, then config's ``env`` rendered by the stack."""
    render = getattr(stack, "_env", None)
    return {**os.environ, **(render() if callable(render) else {})}


def record_limits(run: Any) -> None:
    """Record the app's declared limits as a ``budget ok limits`` event (nothing when config names none)."""
    spec = run.config.limits
    if spec:
        declared = declared_limits(spec, run.config.time_scale, app_env(run.stack), getattr(run.config, "root", None))
        run.history.record(v.BUDGET, "ok", LIMITS, data=declared)


def record_results(run: Any, dsn: str) -> int:
    """Record the app's saved step results as ``write ok step_saved`` events; how many (0 if not configured)."""
    query = run.config.results_query
    if not query or run.history.events().by_source(v.WRITE, name=v.STEP_SAVED):
        return 0  # not configured, or the scenario records its own
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(query).fetchall()
    except psycopg.Error as exc:
        raise ConfigError(f"results_query failed: {exc}; it must return job_id, step, attempt, call_id, "
                          f"saved_at[, committed_at]", key="results_query") from exc
    to_monotonic = wall_to_monotonic()
    for row in rows:
        job_id, step, attempt, call_id, saved = row[:5]
        committed = row[5] if len(row) > 5 else None
        wall = float(saved) if saved is not None else time.time()
        run.history.record(v.WRITE, "ok", v.STEP_SAVED, job_id=str(job_id), attempt=attempt,
                           data={"step": step, "table": "results", "call_id": None if call_id is None else str(call_id),
                                 "attempt": attempt, "refused": False, **committed_data(committed, to_monotonic)},
                           t=to_monotonic(wall), wall=wall)  # one converter for the whole batch
    return len(rows)
