"""Celery settings applied inside every worker and beat, over the app's own (``celery_settings.py``).

* In a worker (signal ``worker_init``: the app's configuration is read, the
  broker not yet connected, the pool not yet forked): the settings, merged
  (``broker_transport_options`` key by key), then each task's time limits:
  the ones config names, and a limit a task took from a setting changed here.
* In beat (embedded or not): each named entry of the schedule runs at the
  interval given, replacing the app's (``Scheduler.merge_inplace``, which every
  scheduler reads the app's schedule through).
* With ``retry_scale``: a retry's countdown (given, the task's
  ``default_retry_delay``, autoretry's backoff) is scaled in ``Task.retry``.

The worker's own default limits (its command line's ``--time-limit``) are
kept in ``WORKER_LIMITS`` for the task events (prefork children inherit it).
"""
from __future__ import annotations

import functools
from typing import Any, Mapping

from harness.instrument import _events

WORKER_LIMITS: dict[str, float | None] = {"time_limit": None, "soft_time_limit": None}
_CONF_TO_TASK = {"task_time_limit": "time_limit", "task_soft_time_limit": "soft_time_limit"}


class CeleryOverrides:
    """One process's overrides (already in run seconds)."""

    def __init__(self, settings: Mapping[str, Any]):
        self.conf = dict(settings.get("conf") or {})
        self.tasks = dict(settings.get("tasks") or {})
        self.beat = dict(settings.get("beat_schedule") or {})
        self.retry_scale = settings.get("retry_scale")

    def install(self, celery: Any) -> None:
        from celery import signals

        signals.worker_init.connect(self.worker_init, weak=False)
        self._wrap_beat()
        if self.retry_scale is not None:
            self._wrap_retry()

    def worker_init(self, sender: Any = None, **_: Any) -> None:
        app = sender.app
        before = {key: app.conf.get(key) for key in _CONF_TO_TASK}
        self.apply_conf(app)
        for task in app.tasks.values():
            for key, attr in _CONF_TO_TASK.items():
                if key in self.conf and getattr(task, attr, None) == before[key]:
                    setattr(task, attr, self.conf[key])  # the limit came from the setting changed
            for attr, value in self.tasks.get(task.name, {}).items():
                setattr(task, attr, value)
        missing = sorted(set(self.tasks) - set(app.tasks))
        if missing:
            _events.log(f"jobquake-instrument: WARNING celery.tasks names no task of this app: {missing}")
        WORKER_LIMITS.update(time_limit=getattr(sender, "time_limit", None),
                             soft_time_limit=getattr(sender, "soft_time_limit", None))

    def apply_conf(self, app: Any) -> None:
        changes = dict(self.conf)
        if "broker_transport_options" in changes:
            changes["broker_transport_options"] = {**(app.conf.broker_transport_options or {}),
                                                   **changes["broker_transport_options"]}
        if changes:
            app.conf.update(changes)

    def _wrap_beat(self) -> None:
        from celery.beat import Scheduler

        original = Scheduler.merge_inplace
        if getattr(original, "_jobquake_patched", False) or not (self.beat or self.conf):
            return
        overrides = self

        @functools.wraps(original)
        def merge_inplace(scheduler: Any, schedule: Any) -> Any:
            overrides.apply_conf(scheduler.app)
            return original(scheduler, overrides.beat_entries(schedule))

        merge_inplace._jobquake_patched = True  # type: ignore[attr-defined]
        Scheduler.merge_inplace = merge_inplace

    def beat_entries(self, schedule: Mapping[str, Any]) -> dict[str, Any]:
        """The app's schedule with each named entry's interval replaced."""
        missing = sorted(set(self.beat) - set(schedule))
        if missing:
            _events.log(f"jobquake-instrument: WARNING celery.beat_schedule names no entry of this app: {missing}")
        return {name: {**entry, "schedule": self.beat[name]} if name in self.beat and isinstance(entry, dict)
                else entry for name, entry in schedule.items()}

    def _wrap_retry(self) -> None:
        from celery.app.task import Task

        original = Task.retry
        if getattr(original, "_jobquake_patched", False):
            return
        scale = float(self.retry_scale)

        @functools.wraps(original)
        def retry(task: Any, *args: Any, eta: Any = None, countdown: Any = None, **kwargs: Any) -> Any:
            if eta is None:
                countdown = (task.default_retry_delay if countdown is None else countdown)
                countdown = None if countdown is None else countdown * scale
            return original(task, *args, eta=eta, countdown=countdown, **kwargs)

        retry._jobquake_patched = True  # type: ignore[attr-defined]
        Task.retry = retry
