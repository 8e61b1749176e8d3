"""A scenario's handle on an app jobquake knows only through its config.

The scenarios ``jobquake init`` writes use it: ``submit`` calls the app's
own function that takes a new job (``"module:function"``), in a process of
its own started with the app's environment (as the API process that calls
it in production would be; a Django project's settings, named by
``DJANGO_SETTINGS_MODULE``, are set up first), and records the submission in the run's
history (``invoke``, then ``ok`` with the job id, or ``fail``), which is
what ``no_lost_submission`` judges. The job rows are read through the
config's column names, directly (never through the fault proxy).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, cast

import psycopg
from psycopg import sql

from harness._wait import wait_until
from harness.errors import HarnessError
from harness.instrument import ENV_PROCESS

__all__ = ["AppClient", "RESULT_MARK", "RUNNER", "SUBMITTER", "SUBMIT_TIMEOUT", "SubmitError"]

SUBMITTER = "submit"  # the label of the submitting process in failpoint contexts (see submitter_match)
RESULT_MARK = "jobquake-submit-result "
SUBMIT_TIMEOUT = 60.0  # seconds a submission may take (a pool wait, a slow commit) before it is an error
# run in the submitting process: import the function, call it, print its result on a marked line
RUNNER = """
import importlib, json, os, sys
if os.environ.get("DJANGO_SETTINGS_MODULE"):  # a Django project's code needs its app registry first
    import django
    django.setup()
module, _, name = sys.argv[1].partition(":")
args = json.loads(sys.argv[2])
result = getattr(importlib.import_module(module), name)(**args)
print({mark!r} + json.dumps(result, default=str), flush=True)
""".format(mark=RESULT_MARK)


class SubmitError(HarnessError):
    """The app's submit function failed or returned no job id."""


class AppClient:
    """Submit jobs through the app's own function; read and wait for job rows by config."""

    def __init__(self, jq: Any, *, submit: str, job_args: Callable[[int], dict[str, Any]] | None = None):
        if ":" not in submit:
            raise SubmitError(f"submit = {submit!r}: expected 'module:function'")
        self.jq = jq
        self.submit_spec = submit
        self.job_args = job_args or (lambda n: {})
        self.table = jq.jobs
        self._pool: ThreadPoolExecutor | None = None

    # -- submitting --------------------------------------------------------------
    def submit(self, **kwargs: Any) -> str:
        """Call the submit function with ``kwargs`` in an app process; the job id it returns, as text."""
        record = self.jq.record
        record.submitting(function=self.submit_spec, args=kwargs)
        proc = subprocess.run([sys.executable, "-c", RUNNER, self.submit_spec, json.dumps(kwargs, default=str)],
                              cwd=self.jq.config.root, env={**os.environ, **self.jq.stack.env, ENV_PROCESS: SUBMITTER},
                              capture_output=True, text=True, timeout=SUBMIT_TIMEOUT)
        marked = [line for line in proc.stdout.splitlines() if line.startswith(RESULT_MARK)]
        if proc.returncode != 0 or not marked:
            record.submission(None, accepted=False, error=f"exit {proc.returncode}", exit=proc.returncode,
                              stderr=proc.stderr[-2000:])
            raise SubmitError(f"{self.submit_spec}(**{kwargs!r}) failed (exit {proc.returncode}):\n"
                              f"{proc.stderr[-2000:]}")
        job_id = json.loads(marked[-1][len(RESULT_MARK):])
        if job_id is None:
            record.submission(None, accepted=False, error="returned no job id", returned=None)
            raise SubmitError(f"{self.submit_spec} returned None: it must return the new job's id")
        record.submission(str(job_id))
        return str(job_id)

    def submit_job(self, n: int) -> str:
        """Submit job number ``n`` with the arguments ``job_args(n)``."""
        return self.submit(**self.job_args(n))

    def submit_job_later(self, n: int) -> Future[str]:
        """``submit_job(n)`` in a thread: the scenario can watch the job run while the submit returns."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="jobquake-submit")
        return self._pool.submit(self.submit_job, n)

    @staticmethod
    def submitter_match() -> dict[str, str]:
        """A failpoint ``match`` that fires only in the process a ``submit`` runs in."""
        return {"process": SUBMITTER}

    # -- the job table -----------------------------------------------------------
    def job(self, job_id: str) -> dict[str, Any]:
        """The job's row: ``state``, ``reason``, ``attempt`` (None where config names no column)."""
        t = self.table
        cols = [sql.Identifier(c) if c else sql.NULL for c in (t.state_column, t.reason_column, t.attempt_column)]
        query = sql.SQL("SELECT {}::text, {}::text, {} FROM {} WHERE {}::text = %s").format(
            *cols, sql.Identifier(t.table), sql.Identifier(t.id_column))
        rows = self.query(query, str(job_id))
        if not rows:
            raise SubmitError(f"no row with {t.id_column} = {job_id!r} in {t.table}")
        state, reason, attempt = rows[0]
        return {"job_id": str(job_id), "state": state, "reason": reason, "attempt": attempt}

    def wait_for(self, job_id: str, *states: str, timeout: float = 20.0) -> dict[str, Any]:
        """Poll the job until it is in one of ``states`` (default: a terminal state); its row.

        Waiting for terminal states only, the polls back off: such a state stays once reached.
        """
        terminal = tuple(self.table.terminal_states)
        wanted = states or terminal
        lasting = set(wanted) <= set(terminal)
        return wait_until(lambda: (row := self.job(job_id))["state"] in wanted and row, timeout=timeout,
                          lasting=lasting, what=f"job {job_id} in {wanted}")

    def insert_job(self, values: dict[str, Any]) -> str:
        """Insert a job row directly (a row the app left behind, say); its id."""
        t = self.table
        query = sql.SQL("INSERT INTO {} ({}) VALUES ({}) RETURNING {}::text").format(
            sql.Identifier(t.table), sql.SQL(", ").join(map(sql.Identifier, values)),
            sql.SQL(", ").join(sql.Placeholder() * len(values)), sql.Identifier(t.id_column))
        return cast("str", self.query(query, *values.values())[0][0])

    def query(self, query: Any, *params: Any) -> list[tuple[Any, ...]]:
        """Run SQL on the app's database, directly; its rows (empty for statements without any)."""
        with psycopg.connect(self.jq.database_dsn, autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def close(self) -> None:
        """Wait for submissions still under way."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
