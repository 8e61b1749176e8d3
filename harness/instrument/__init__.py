"""Instrumentation the harness loads into every app process it starts, with no change to the app.

Like ``opentelemetry-instrument``: the harness prepends ``boot/`` (a
``sitecustomize.py``) to the app processes' ``PYTHONPATH`` and sets the
variables below. At interpreter start it patches, as each is imported:

* Celery: the running task (id, name, args, retries, redelivery) through
  the ``task_prerun`` / ``task_postrun`` signals; the job id is read where
  ``job_id_from`` says; each run of a task for a job is the next attempt.
* httpx, requests, aiohttp: calls to the paid API's URL, or to a model
  provider's public address (sent to the paid API instead, ``_routes.py``),
  carry ``X-Job-Id``, ``X-Attempt``, ``X-Caller-Pid`` and the timeout the
  client set (``_timeouts.py``).
* SQLAlchemy: every engine that connects is lent to failpoint actions
  (``exhaust_pool`` finds it as ``db_engine``).
* Django's ORM: its commit, its ``on_commit`` callbacks and its connections
  (``_django.py``); each connection alias is lent to ``exhaust_pool``.

and offers failpoints at those framework boundaries (``FAILPOINTS``). Without
``ENV_DIR`` in the environment nothing is loaded. This package imports
nothing heavy: the libraries it patches are the app's, imported by the app.
"""
from __future__ import annotations

from pathlib import Path

ENV_DIR = "JOBQUAKE_INSTRUMENT_DIR"  # the run's instrumentation folder; its presence switches it on
ENV_PAIDAPI_URL = "JOBQUAKE_PAIDAPI_URL"  # calls to URLs starting with this are tagged
ENV_JOB_ID_FROM = "JOBQUAKE_INSTRUMENT_JOB_ID_FROM"  # where the job id is (config ``job_id_from``)
ENV_PROCESS = "JOBQUAKE_PROCESS_NAME"  # the process's name in the stack ("api", "worker1"...)
ENV_SETTINGS = "JOBQUAKE_INSTRUMENT_SETTINGS"  # JSON: routes, timeouts, Celery overrides, the stack's URLs

BOOT_DIR = Path(__file__).resolve().parent / "boot"  # holds the sitecustomize.py to prepend
LOADED_MARKER = "jobquake-instrument: loaded"  # written to the process's stderr once active
FAILED_MARKER = "jobquake-instrument: FAILED"  # ... or this, with the reason
WRONG_TARGET_MARKER = "jobquake-instrument: WRONG TARGET"  # a broker or database not the stack's

# The failpoints every instrumented process offers: name -> where it fires.
FAILPOINTS = {
    "sqlalchemy.after_commit": "a connection that committed went back to its pool",
    "sqlalchemy.pool_checkout": "before a connection is taken from a pool",
    "celery.before_publish": "before a task is published (Celery.send_task: delay, apply_async, retries)",
    "celery.task_prerun": "before a task runs, once its job and attempt are known",
    "celery.task_postrun": "after a task ran, before its job context is cleared",
    "http.before_paid_call": "before a call to the paid API is sent",
    "django.before_commit": "before the outermost transaction of a Django atomic() block commits",
    "django.on_commit": "right after a Django transaction committed, before its on_commit callbacks run",
    "django.after_write": "right after a Django statement that wrote (INSERT, UPDATE) committed on its own, "
                          "in autocommit outside any atomic() block",
    "django.connection": "before Django opens a connection or takes one from its pool",
}

HEADER_JOB = "X-Job-Id"
HEADER_ATTEMPT = "X-Attempt"
HEADER_PID = "X-Caller-Pid"
HEADER_TIMEOUT = "X-Jobquake-Timeout"  # the read timeout the client set on the call, in seconds, or "none"
HEADER_APP_TIMEOUT = "X-Jobquake-App-Timeout"  # ... as the app's code asked, when jobquake scaled it
HEADER_ROUTED = "X-Jobquake-Routed-From"  # the URL the code called, when it was a provider's own
