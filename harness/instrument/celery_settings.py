"""``[tool.jobquake.celery]``: Celery settings applied inside every worker and beat, over the app's own.

Written in production seconds (as the app's code has them) and scaled by
the run's ``time_scale`` here, before they reach the app's processes::

    [tool.jobquake.celery]
    # any Celery setting; durations scaled
    broker_transport_options = { visibility_timeout = 3600, unacked_restore_interval = 100,
                                 unacked_restore_throttle = 1 }
    task_soft_time_limit = 600
    # per task: time limits the app's decorators set
    tasks = { "recaps.summarise" = { soft_time_limit = 240, time_limit = 300 } }
    # per beat entry: its interval, in seconds
    beat_schedule = { "sweep-stale-recaps" = 60 }
    # retry countdowns (explicit, the task's default_retry_delay, autoretry's backoff) times time_scale
    scale_retry_delays = true

kombu's Redis transport hands a dead worker's unacknowledged message out
again only after ``visibility_timeout`` (default 3600 s) and only when its
restore sweep runs (every ``unacked_restore_interval`` x
``unacked_restore_throttle`` seconds, default 10 x 10): ``restore_cadence``
says what a run will wait for.
"""
from __future__ import annotations

from typing import Any, Mapping

from harness.errors import ConfigError
from harness.setting_checks import checks_setting

KOMBU_VISIBILITY_S = 3600.0
KOMBU_RESTORE_INTERVAL_S = 10.0
KOMBU_RESTORE_THROTTLE = 10
RESTORE_AT_LEAST_S = 0.5  # a restore sweep more often than this costs the broker and tells nothing more
TRANSPORT_DURATIONS = ("visibility_timeout", "unacked_restore_interval", "unacked_mutex_expire")
DURATION_SUFFIXES = ("_time_limit", "_timeout", "_interval", "_delay", "_expires")
TASK_KEYS = ("time_limit", "soft_time_limit")
SPECIAL = ("tasks", "beat_schedule", "scale_retry_delays")


def _seconds(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"celery.{where} = {value!r}: expected a number of seconds", key=f"celery.{where}")
    return float(value)


def _table(where: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"celery.{where} = {value!r}: expected a table", key=f"celery.{where}")
    return value


def scaled(table: Mapping[str, Any], time_scale: float) -> dict[str, Any]:
    """The settings the instrumentation applies: ``conf`` (Celery settings), ``tasks``
    (task name -> attributes), ``beat_schedule`` (entry -> seconds), ``retry_scale``; all in run time."""
    conf: dict[str, Any] = {}
    for key, value in table.items():
        if key in SPECIAL:
            continue
        if key == "broker_transport_options":
            conf[key] = _transport(_table(key, value), time_scale)
        elif key.endswith(DURATION_SUFFIXES) and value is not None:
            conf[key] = _seconds(key, value) * time_scale
        else:
            conf[key] = value
    tasks = {}
    for name, attrs in _table("tasks", table.get("tasks", {})).items():
        unknown = set(_table(f"tasks.{name}", attrs)) - set(TASK_KEYS)
        if unknown:
            raise ConfigError(f"celery.tasks.{name}: unknown keys {sorted(unknown)}; known: {list(TASK_KEYS)}",
                              key=f"celery.tasks.{name}")
        tasks[name] = {k: _seconds(f"tasks.{name}.{k}", v) * time_scale for k, v in attrs.items()}
    beat = {name: _seconds(f"beat_schedule.{name}", v) * time_scale
            for name, v in _table("beat_schedule", table.get("beat_schedule", {})).items()}
    retry = table.get("scale_retry_delays", False)
    if not isinstance(retry, bool):
        raise ConfigError(f"celery.scale_retry_delays = {retry!r}: expected true or false",
                          key="celery.scale_retry_delays")
    return {"conf": conf, "tasks": tasks, "beat_schedule": beat, "retry_scale": time_scale if retry else None}


def _transport(options: Mapping[str, Any], time_scale: float) -> dict[str, Any]:
    out = dict(options)
    for key in TRANSPORT_DURATIONS:
        if key in out:
            out[key] = _seconds(f"broker_transport_options.{key}", out[key]) * time_scale
    if "unacked_restore_interval" in out:
        out["unacked_restore_interval"] = max(out["unacked_restore_interval"], RESTORE_AT_LEAST_S)
    return out


@checks_setting("celery")
def _check(table: Any) -> str | None:
    try:
        scaled(table, 1.0)
    except ConfigError as exc:
        return str(exc)
    return None


def restore_cadence(table: Mapping[str, Any], time_scale: float) -> tuple[float, float, bool]:
    """(visibility timeout, restore sweep period, set by config?) in run seconds: when the Redis
    broker hands a dead worker's message out again, at most visibility + one period after delivery."""
    options = dict(table.get("broker_transport_options") or {})
    if not options:
        return KOMBU_VISIBILITY_S, KOMBU_RESTORE_INTERVAL_S * KOMBU_RESTORE_THROTTLE, False
    applied = _transport(options, time_scale)
    visibility = applied.get("visibility_timeout", KOMBU_VISIBILITY_S)
    interval = applied.get("unacked_restore_interval", KOMBU_RESTORE_INTERVAL_S)
    throttle = int(applied.get("unacked_restore_throttle", KOMBU_RESTORE_THROTTLE) or 1)
    return visibility, interval * throttle, True
