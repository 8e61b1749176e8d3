"""The timings init writes: ``[tool.jobquake.celery]``, ``settle_timeout``, paid-call timeouts to scale.

Celery settings the code writes as literals (a decorator's time limits, a
beat entry's interval, ``broker_transport_options``) are production
seconds nothing else scales: init writes them into ``[tool.jobquake.celery]``
(scaled inside every worker and beat). Settings the code reads from an
environment variable are scaled through ``[tool.jobquake.env]`` instead,
and are not written twice. kombu's restore of a dead worker's message
(visibility timeout, restore sweep) is written even when the app keeps
kombu's defaults, so a killed worker's task comes back within the run's
``settle_timeout``.
"""
from __future__ import annotations

import json
import math

from harness.instrument.celery_settings import (KOMBU_RESTORE_INTERVAL_S, KOMBU_RESTORE_THROTTLE,
                                                KOMBU_VISIBILITY_S, restore_cadence)
from harness.scaffold.findings import Findings

SETTLE_AT_LEAST = 20.0  # seconds: a job's work and a fresh worker's start on a busy machine
SETTLE_MARGIN = 10.0
OLDER_KOMBU_ASK_S = 10.0  # kombu before the restore options sweeps every 10 s whatever is set
TASK_LIMITS = ("soft_time_limit", "time_limit")
APP_LIMITS = ("task_time_limit", "task_soft_time_limit")


def celery_table(found: Findings) -> tuple[dict, list[str]]:
    """The ``[tool.jobquake.celery]`` values (production seconds) and a comment line for each."""
    if found.celery_app is None:
        return {}, []
    table: dict = {}
    why: list[str] = []
    transport = _transport(found, why)
    if transport:
        table["broker_transport_options"] = transport
    for key in APP_LIMITS:
        value = found.celery_conf.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            table[key] = value
            why.append(f"found: {key} = {value:g} in the app's Celery settings")
    tasks = {}
    for task in found.tasks:
        limits = {k: task.options[k] for k in TASK_LIMITS if isinstance(task.options.get(k), (int, float))}
        if limits:
            name = task.name or f"{task.module}.{task.function}"
            tasks[name] = limits
            why.append(f"found: {name}'s decorator sets " + ", ".join(f"{k}={v:g}" for k, v in limits.items()))
    if tasks:
        table["tasks"] = tasks
    beat = {name: seconds for name, seconds in found.beat_entries.items() if seconds is not None}
    if beat:
        table["beat_schedule"] = beat
        why.append("found: the beat schedule's intervals: " + ", ".join(f"{n} every {s:g} s" for n, s in beat.items()))
    if found.retries:
        table["scale_retry_delays"] = True
        why.append("found: tasks that retry (self.retry, autoretry_for): their countdowns are scaled too")
    return table, why


def _transport(found: Findings, why: list[str]) -> dict:
    given = found.celery_conf.get("broker_transport_options", {})
    if given is None:  # computed by the code: its durations come from variables [tool.jobquake.env] scales
        why.append("the app computes broker_transport_options: only kombu's restore sweep is set here")
        return {"unacked_restore_interval": KOMBU_RESTORE_INTERVAL_S * KOMBU_RESTORE_THROTTLE,
                "unacked_restore_throttle": 1}
    literal = {k: v for k, v in (given or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    computed = {k for k, v in (given or {}).items() if v is None}  # from variables [tool.jobquake.env] scales
    out = {} if "visibility_timeout" in computed else \
        {"visibility_timeout": literal.get("visibility_timeout", KOMBU_VISIBILITY_S)}
    if "unacked_restore_interval" in literal:
        out["unacked_restore_interval"] = literal["unacked_restore_interval"]
        out["unacked_restore_throttle"] = literal.get("unacked_restore_throttle", KOMBU_RESTORE_THROTTLE)
    else:
        # kombu restores every 10 s x throttle 10: the same 100 s as one sweep every 100 s, which scales
        out["unacked_restore_interval"] = KOMBU_RESTORE_INTERVAL_S * literal.get("unacked_restore_throttle",
                                                                                  KOMBU_RESTORE_THROTTLE)
        out["unacked_restore_throttle"] = 1
    defaults = [k for k in ("visibility_timeout", "unacked_restore_interval") if k not in set(literal) | computed]
    why.append("kombu's Redis transport" + (f" (its defaults for {', '.join(defaults)}: the code sets none)"
                                             if defaults else "") +
               ": a dead worker's unacknowledged task comes back after visibility_timeout, at the next restore sweep")
    return out


def settle_timeout(table: dict, time_scale: float, visibility_run_s: float | None = None) -> tuple[float, str]:
    """A settle bound that outlasts the broker's restore of a killed worker's task, and why.

    ``visibility_run_s``: the visibility timeout in run seconds where a variable sets it (not the table).
    """
    visibility, period, _ = restore_cadence(table, time_scale)
    options = table.get("broker_transport_options") or {}
    if "visibility_timeout" not in options and visibility_run_s is not None:
        visibility = visibility_run_s
    period = max(period, OLDER_KOMBU_ASK_S) if options else period
    needed = visibility + period + SETTLE_MARGIN
    if not table.get("broker_transport_options") or needed <= SETTLE_AT_LEAST:
        return SETTLE_AT_LEAST, "long enough for a killed worker's task to come back from the broker"
    bound = float(5 * math.ceil(needed / 5))
    return bound, (f"a killed worker's task comes back from the broker after visibility_timeout ({visibility:g} s "
                   f"in this run) at the next restore sweep (every {period:g} s at most), plus {SETTLE_MARGIN:g} s")


def toml_inline(value: object) -> str:
    """A TOML value on one line (inline tables for dicts)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {toml_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value)


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)
