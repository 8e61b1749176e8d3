"""Celery settings applied inside every worker, beat and publisher, over the app's own (``celery_settings.py``).

* Settings (``broker_transport_options`` merged key by key), then each
  task's time limits: the ones config names, and a limit a task took from
  a setting changed here. Applied in a worker at ``worker_init`` (the
  app's configuration read, the broker not yet connected, the pool not yet
  forked), and in any process before it first publishes a task: Celery
  puts a task's time limits into each message it publishes, and a worker
  enforces the message's.
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
import weakref
from typing import Any, Mapping

from harness.instrument import _events

WORKER_LIMITS: dict[str, float | None] = {"time_limit": None, "soft_time_limit": None}
_CONF_TO_TASK = {"task_time_limit": "time_limit", "task_soft_time_limit": "soft_time_limit"}
APPLIED = "_jobquake_overrides_applied"


class CeleryOverrides:
    """One process's overrides (already in run seconds)."""

    def __init__(self, settings: Mapping[str, Any], folder: str | None = None):
        self.folder = folder
        self.conf = dict(settings.get("conf") or {})
        self.tasks = dict(settings.get("tasks") or {})
        self.beat = dict(settings.get("beat_schedule") or {})
        self.retry_scale = settings.get("retry_scale")
        self._apps: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()

    def install(self, celery: Any) -> None:
        from celery import signals

        signals.worker_init.connect(self.worker_init, weak=False)
        if self.conf or self.tasks:
            self._wrap(celery_task_class(), "apply_async", self._before_publish)
        if self.beat or self.conf:
            from celery.beat import Scheduler

            self._wrap(Scheduler, "merge_inplace", self._before_merge)
        if self.retry_scale is not None:
            self._wrap_retry()

    # -- settings and tasks ----------------------------------------------------------
    def worker_init(self, sender: Any = None, **_: Any) -> None:
        try:
            app = sender.app
            self.apply_app(app)
            for task in list(app.tasks.values()):
                self.apply_task(task)
            missing = sorted(set(self.tasks) - set(app.tasks))
            if missing:
                _events.log(f"jobquake-instrument: WARNING celery.tasks names no task of this app: {missing}")
            WORKER_LIMITS.update(time_limit=getattr(sender, "time_limit", None),
                                 soft_time_limit=getattr(sender, "soft_time_limit", None))
            self._report_transport(app)
        except Exception:  # Celery swallows what a signal handler raises, before its logging is set up
            _events.print_exception("jobquake-instrument: ERROR applying [tool.jobquake.celery] in a worker")
            raise

    def _report_transport(self, app: Any) -> None:
        """The broker's restore settings this worker runs with, for the harness's settle to say when
        a dead worker's message comes back (kombu's defaults where nothing set them)."""
        options = dict(app.conf.broker_transport_options or {})
        url = str(app.conf.broker_url or "")
        report = {"transport": url.split("://", 1)[0], **{k: options.get(k) for k in (
            "visibility_timeout", "unacked_restore_interval", "unacked_restore_throttle")}}
        if report["transport"].startswith("redis") and not _kombu_has_restore_interval():
            report.update(_old_kombu_restore(options))
        _events.write_state(self.folder, _events.BROKER_FILE, report)

    def apply_app(self, app: Any) -> dict[str, Any]:
        """The settings, once per app; the limits the app's settings gave before (to find tasks that took them)."""
        if app in self._apps:
            return self._apps[app]
        before = {key: app.conf.get(key) for key in _CONF_TO_TASK}
        changes = dict(self.conf)
        if "broker_transport_options" in changes:
            changes["broker_transport_options"] = {**(app.conf.broker_transport_options or {}),
                                                   **changes["broker_transport_options"]}
        if changes:
            app.conf.update(changes)
        self._apps[app] = before
        return before

    def apply_task(self, task: Any) -> None:
        """A task's time limits, once: those config names for it, and those it took from a changed setting."""
        if getattr(task, APPLIED, False):
            return
        before = self.apply_app(task.app)
        for key, attr in _CONF_TO_TASK.items():
            if key in self.conf and getattr(task, attr, None) == before[key]:
                setattr(task, attr, self.conf[key])
        for attr, value in self.tasks.get(task.name, {}).items():
            setattr(task, attr, value)
        task._exec_options = None  # what apply_async puts in each message, read again
        setattr(task, APPLIED, True)

    def _before_publish(self, original: Any, task: Any, *args: Any, **kwargs: Any) -> Any:
        self.apply_task(task)
        return original(task, *args, **kwargs)

    # -- beat --------------------------------------------------------------------------
    def _before_merge(self, original: Any, scheduler: Any, schedule: Any) -> Any:
        self.apply_app(scheduler.app)
        return original(scheduler, self.beat_entries(schedule))

    def beat_entries(self, schedule: Mapping[str, Any]) -> dict[str, Any]:
        """The app's schedule with each named entry's interval replaced."""
        missing = sorted(set(self.beat) - set(schedule))
        if missing:
            _events.log(f"jobquake-instrument: WARNING celery.beat_schedule names no entry of this app: {missing}")
        return {name: {**entry, "schedule": self.beat[name]} if name in self.beat and isinstance(entry, dict)
                else entry for name, entry in schedule.items()}

    # -- retries -------------------------------------------------------------------------
    def _wrap_retry(self) -> None:
        scale = float(self.retry_scale)

        def retry(original: Any, task: Any, *args: Any, eta: Any = None, countdown: Any = None,
                  **kwargs: Any) -> Any:
            if eta is None:
                countdown = task.default_retry_delay if countdown is None else countdown
                countdown = None if countdown is None else countdown * scale
            return original(task, *args, eta=eta, countdown=countdown, **kwargs)

        self._wrap(celery_task_class(), "retry", retry)

    @staticmethod
    def _wrap(cls: Any, name: str, wrapper: Any) -> None:
        original = getattr(cls, name)
        if getattr(original, "_jobquake_patched", False):
            return

        @functools.wraps(original)
        def patched(*args: Any, **kwargs: Any) -> Any:
            return wrapper(original, *args, **kwargs)

        patched._jobquake_patched = True  # type: ignore[attr-defined]
        setattr(cls, name, patched)


def _kombu_has_restore_interval() -> bool:
    """kombu's Redis transport reads unacked_restore_interval / _throttle (newer releases)."""
    from kombu.transport.redis import Channel

    return hasattr(Channel, "unacked_restore_interval")


OLD_KOMBU_RESTORE_EVERY_S = 10.0  # older kombu: its event loop asks for a restore sweep every 10 s, fixed
OLD_KOMBU_THROTTLE = 10  # ... and scans on every 10th ask


def _old_kombu_restore(options: Mapping[str, Any]) -> dict[str, Any]:
    """On a kombu without the restore options, the throttle asked for still applies: every ask scans
    (``QoS.restore_visible``'s interval); the asks stay every 10 s. What the worker then runs with."""
    throttle = int(options.get("unacked_restore_throttle") or OLD_KOMBU_THROTTLE)
    if throttle != OLD_KOMBU_THROTTLE:
        from kombu.transport.redis import QoS

        original = QoS.restore_visible
        if not getattr(original, "_jobquake_patched", False):
            @functools.wraps(original)
            def restore_visible(qos: Any, start: int = 0, num: int = 10, interval: int = 10) -> Any:
                return original(qos, start, num, throttle)

            restore_visible._jobquake_patched = True  # type: ignore[attr-defined]
            QoS.restore_visible = restore_visible
    return {"unacked_restore_interval": OLD_KOMBU_RESTORE_EVERY_S, "unacked_restore_throttle": throttle}


def celery_task_class() -> Any:
    from celery.app.task import Task

    return Task
