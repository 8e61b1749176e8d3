"""Celery: the running task's job and attempt, from the task_prerun / task_postrun signals.

Handlers are connected once ``celery`` is imported, in the worker's main
process, so the prefork children inherit them. ``before_task_publish``
runs in whichever process sends a task (an API, a relay, a task).
"""
from __future__ import annotations

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

        signals.task_prerun.connect(self.prerun, weak=False)
        signals.task_postrun.connect(self.postrun, weak=False)
        signals.before_task_publish.connect(self.before_publish, weak=False)

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
                       task_id=str(task_id), retries=retries, redelivered=redelivered)
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

    def before_publish(self, sender: str | None = None, headers: dict | None = None,
                       body: Any = None, **_: Any) -> None:
        headers = headers or {}
        published = self._published_job_id(sender, headers, body)
        extra = {} if _context.current() is not None else {"job_id": published}
        fire("celery.before_publish", published_task=sender, published_id=headers.get("id"),
             published_job_id=published, **extra)

    def _published_job_id(self, name: str | None, headers: dict, body: Any) -> str | None:
        # protocol 2 bodies are (args, kwargs, embed); a miss here is no error: the task may not be a job's
        try:
            args, kwargs = (body[0], body[1]) if isinstance(body, (tuple, list)) else ((), {})
            return self.resolve(_registered(name), str(headers.get("id")), tuple(args), dict(kwargs))
        except (jobid.Unresolved, IndexError, TypeError, ValueError):
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


def _registered(name: str | None) -> Any:
    """The task object ``name`` in any Celery app of this process (None when not defined here).

    Every app, not ``current_app``: that one is per thread, and a web server's
    handler thread sees the default app. Registries are read as they stand:
    asking ``app.tasks`` would finalize an app early.
    """
    from celery import _state

    for app in list(_state._get_active_apps()):
        task = (getattr(app, "_tasks", None) or {}).get(name)
        if task is not None:
            return task
    return None
