"""Celery: the running task's job and attempt, from the task_prerun / task_postrun signals.

Handlers are connected once ``celery`` is imported, in the worker's main
process, so the prefork children inherit them. ``celery.before_publish``
fires in whichever process sends a task (an API, a relay, a task). Celery
logs and swallows what a signal handler raises, so at
``celery.task_prerun`` / ``celery.task_postrun`` the actions that act are
``kill``, ``hang``, ``sleep``, ``exhaust_pool`` and callbacks.
"""
from __future__ import annotations

import functools
from typing import Any

from harness.instrument import _context, _events, jobid
from harness.instrument._fire import fire


class CeleryHooks:
    """The signal handlers, bound to one process's settings."""

    def __init__(self, folder: str | None, expression: str):
        self.folder = folder
        self.expression = expression
        self.resolve = jobid.resolver(expression)

    def install(self, celery: Any) -> None:
        from celery import signals
        from celery.app.base import Celery

        signals.task_prerun.connect(self.prerun, weak=False)
        signals.task_postrun.connect(self.postrun, weak=False)
        self.wrap_send_task(Celery)

    def prerun(self, sender: Any = None, task_id: str | None = None, task: Any = None,
               args: Any = (), kwargs: Any = None, **_: Any) -> None:
        task = task or sender
        request = getattr(task, "request", None)
        retries = int(getattr(request, "retries", 0) or 0)
        redelivered = bool((getattr(request, "delivery_info", None) or {}).get("redelivered"))
        name = getattr(task, "name", "?")
        job_id = self._job_id(task, name, str(task_id), tuple(args or ()), dict(kwargs or {}))
        attempt = None
        if job_id is not None:
            attempt = _context.next_attempt(self.folder, name, job_id, fallback=retries + 1)
        job = _context.JobContext(job_id, attempt, name, str(task_id), retries, redelivered)
        _context.enter(job)
        _events.record(self.folder, "invoke", "task", job_id=job_id, attempt=attempt, task=name,
                       task_id=str(task_id), retries=retries, redelivered=redelivered, **_limits(task, request))
        fire("celery.task_prerun")

    def postrun(self, sender: Any = None, task_id: str | None = None, task: Any = None,
                state: str | None = None, **_: Any) -> None:
        job = _context.current()
        try:
            fire("celery.task_postrun", state=state)
        finally:
            _context.leave()
            if job is not None:
                _events.record(self.folder, "ok", "task", job_id=job.job_id, attempt=job.attempt,
                               task=job.task, task_id=job.task_id, state=state)

    def wrap_send_task(self, celery_cls: Any) -> None:
        """Fire ``celery.before_publish`` in ``Celery.send_task``, where every publish passes
        (``delay``, ``apply_async``, retries, canvas). Not in the ``before_task_publish`` signal:
        Celery logs and swallows what a signal handler raises, so a ``raise`` armed there
        would never reach the publisher."""
        original = celery_cls.send_task
        if getattr(original, "_jobquake_patched", False):
            return
        hooks = self

        @functools.wraps(original)
        def send_task(app: Any, name: str, args: Any = None, kwargs: Any = None, *rest: Any, **options: Any) -> Any:
            if len(rest) < 3 and not options.get("task_id"):  # rest[2]: a task_id given by position
                from celery.utils import uuid

                options["task_id"] = uuid()  # what send_task would draw itself; the failpoint can name it
            task_id = rest[2] if len(rest) >= 3 else options["task_id"]
            hooks.before_publish(app, name, task_id, args, kwargs)
            return original(app, name, args, kwargs, *rest, **options)

        send_task._jobquake_patched = True  # type: ignore[attr-defined]
        celery_cls.send_task = send_task

    def before_publish(self, app: Any, name: str, task_id: str | None, args: Any, kwargs: Any) -> None:
        published = self._published_job_id(app, name, task_id, args, kwargs)
        extra = {} if _context.current() is not None else {"job_id": published}
        fire("celery.before_publish", published_task=name, published_id=task_id, published_job_id=published,
             **extra)

    def _published_job_id(self, app: Any, name: str, task_id: str | None, args: Any, kwargs: Any) -> str | None:
        # a miss is no error here: the task published may not be a job's
        task = (getattr(app, "_tasks", None) or {}).get(name)  # as it stands: app.tasks would finalize the app
        try:
            return self.resolve(task, str(task_id), tuple(args or ()), dict(kwargs or {}))
        except (jobid.Unresolved, TypeError, ValueError):
            return None

    def _job_id(self, task: Any, name: str, task_id: str, args: tuple, kwargs: dict) -> str | None:
        try:
            return self.resolve(task, task_id, args, kwargs)
        except jobid.Unresolved as exc:
            message = (f"job_id_from = {self.expression!r} does not resolve for task {name} "
                       f"[{task_id}]: {exc}; its paid calls carry no job id")
            _events.log(f"jobquake-instrument: ERROR {message}")
            _events.record(self.folder, "fail", "job_id_from", task=name, task_id=task_id,
                           expression=self.expression, error=str(exc))
            return None



def _limits(task: Any, request: Any) -> dict[str, float | None]:
    """The time limits this run of the task has: given with the message, the task's own (its
    decorator or the app's settings), else the worker's defaults (its command line)."""
    from harness.instrument._overrides import WORKER_LIMITS

    hard, soft = (getattr(request, "timelimit", None) or (None, None))[:2]
    hard = hard if hard is not None else getattr(task, "time_limit", None)
    soft = soft if soft is not None else getattr(task, "soft_time_limit", None)
    return {"time_limit": hard if hard is not None else WORKER_LIMITS["time_limit"],
            "soft_time_limit": soft if soft is not None else WORKER_LIMITS["soft_time_limit"]}
