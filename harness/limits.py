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
     "retries": {"backoff": seconds, "max_attempts": n},  # a failed attempt's job is offered again after
                                                        # backoff; given up after n attempts (checks/retries.py)
     "queries_per_item": {table or "*": statements}}    # statements per item of a batch, per table
                                                        # (optional; checks/work.py)

recorded as one ``budget ok limits`` event. **Results** (config
``results_query``): SQL returning the app's saved paid-step results, one
row each — ``job_id, step, attempt, call_id, saved_at`` (epoch seconds)
and optionally ``committed_at`` — recorded as ``write ok step_saved``
events (unless the scenario recorded its own), for the provenance check.
Both are read here and recorded by ``harness.evidence.collect``.
"""
from __future__ import annotations

import inspect
from typing import Any, Mapping

import psycopg

from harness.config import load_callable
from harness.errors import ConfigError


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
            "queries_per_item": _per_item_budgets(spec, declared.get("queries_per_item")),
            **_retries(spec, declared.get("retries"))}


def _retries(spec: str, retries: Any) -> dict[str, Any]:
    """The declared retry policy, checked: {} when none."""
    if retries is None:
        return {}
    if not isinstance(retries, Mapping) or not isinstance(retries.get("backoff"), (int, float)) \
            or retries["backoff"] < 0 or not isinstance(retries.get("max_attempts"), int) or retries["max_attempts"] < 1:
        raise ConfigError(f"limits = {spec!r}: retries must be {{'backoff': seconds >= 0, 'max_attempts': n >= 1}}, "
                          f"got {retries!r}", key="limits")
    return {"retries": {"backoff": float(retries["backoff"]), "max_attempts": int(retries["max_attempts"])}}


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


def saved_results(query: str, dsn: str) -> list[tuple[Any, ...]]:
    """The rows of the app's ``results_query``: job_id, step, attempt, call_id, saved_at[, committed_at]."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            return conn.execute(query).fetchall()
    except psycopg.Error as exc:
        raise ConfigError(f"results_query failed: {exc}; it must return job_id, step, attempt, call_id, "
                          f"saved_at[, committed_at]", key="results_query") from exc
