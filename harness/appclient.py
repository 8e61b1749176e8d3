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
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, cast

import psycopg
from psycopg import sql

from harness._wait import wait_until
from harness.errors import HarnessError, WaitTimeout
from harness.instrument import ENV_PROCESS
from harness.paidapi.ledger import refusals

__all__ = ["AppClient", "RESULT_MARK", "RUNNER", "SUBMITTER", "SUBMIT_TIMEOUT", "SubmitError"]

SUBMITTER = "submit"  # the label of the submitting process in failpoint contexts (see submitter_match)
RESULT_MARK = "jobquake-submit-result "
SUBMIT_TIMEOUT = 60.0  # seconds a submission may take (a pool wait, a slow commit) before it is an error
RUNNER = (Path(__file__).resolve().parent / "_submit_runner.py").read_text()  # run as `python -c`, from the app
POLL = 1.0  # seconds between looks while waiting on a held call


class SubmitError(HarnessError):
    """The app's submit function failed or returned no job id."""


class AppClient:
    """Submit jobs through the app's own function; read and wait for job rows by config."""

    def __init__(self, jq: Any, *, submit: str, job_args: Callable[[int], dict[str, Any]] | None = None,
                 session: str | None = None):
        for key, spec in (("submit", submit), ("session", session)):
            if spec is not None and ":" not in spec:
                raise SubmitError(f"{key} = {spec!r}: expected 'module:name'")
        self.jq = jq
        self.submit_spec = submit
        self.session_spec = session or ""  # the app's session factory, for a submit function taking a session
        self.job_args = job_args or (lambda n: {})
        self.table = jq.jobs
        self._pool: ThreadPoolExecutor | None = None

    # -- submitting --------------------------------------------------------------
    def submit(self, **kwargs: Any) -> str:
        """Call the submit function with ``kwargs`` in an app process; the job id it returns, as text.

        ``SubmitError`` when it fails (recorded as refused, with the row it wrote if any: see ``try_submit``).
        """
        job_id, error = self._submit(kwargs)
        if error is not None:
            raise SubmitError(error)
        return job_id  # type: ignore[return-value]

    def try_submit(self, **kwargs: Any) -> str | None:
        """``submit``, but a submission the app refuses is recorded, not raised; its job id or None.

        An app may tell its caller it failed after the job's row was committed (the pool ran dry
        right after): the submission is recorded as refused, naming that row, and the row is
        judged by every invariant like any other job of the test.
        """
        job_id, _ = self._submit(kwargs)
        return job_id

    def _submit(self, kwargs: dict[str, Any]) -> tuple[str | None, str | None]:
        record = self.jq.record
        record.submitting(function=self.submit_spec, args=kwargs)
        before = self._job_ids()
        proc = subprocess.run([sys.executable, "-c", RUNNER, self.submit_spec, json.dumps(kwargs, default=str),
                               self.session_spec, self.table.id_column, RESULT_MARK],
                              cwd=self.jq.config.root, env={**os.environ, **self.jq.stack.env, ENV_PROCESS: SUBMITTER},
                              capture_output=True, text=True, timeout=SUBMIT_TIMEOUT)
        marked = [line for line in proc.stdout.splitlines() if line.startswith(RESULT_MARK)]
        job_id = json.loads(marked[-1][len(RESULT_MARK):]) if marked else None
        if proc.returncode == 0 and job_id is not None:
            record.submission(str(job_id))
            return str(job_id), None
        written = sorted(self._job_ids() - before)
        why = f"exit {proc.returncode}" if proc.returncode != 0 else "returned no job id"
        kept = written[0] if len(written) == 1 else None
        record.submission(kept, accepted=False, error=why, exit=proc.returncode, stderr=proc.stderr[-2000:],
                          row_written=bool(written))
        after = (f"; its row {kept} was written before it failed: the row is judged like any other job"
                 if kept else "")
        return kept, (f"{self.submit_spec}(**{kwargs!r}) failed ({why}){after}:\n{proc.stderr[-2000:]}"
                      if proc.returncode != 0 else
                      f"{self.submit_spec} returned None: it must return the new job's id (or an object with one)")

    def _job_ids(self) -> set[str]:
        query = sql.SQL("SELECT {}::text FROM {}").format(sql.Identifier(self.table.id_column),
                                                         sql.Identifier(self.table.table))
        return {row[0] for row in self.query(query)}

    def submit_job(self, n: int) -> str:
        """Submit job number ``n`` with the arguments ``job_args(n)``."""
        return self.submit(**self.job_args(n))

    def try_submit_job(self, n: int) -> str | None:
        """``try_submit`` with the arguments ``job_args(n)``."""
        return self.try_submit(**self.job_args(n))

    def submit_job_later(self, n: int) -> Future[str]:
        """``submit_job(n)`` in a thread: the scenario can watch the job run while the submit returns."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="jobquake-submit")
        return self._pool.submit(self.submit_job, n)

    @staticmethod
    def submitter_match() -> dict[str, str]:
        """A failpoint ``match`` that fires only in the process a ``submit`` runs in."""
        return {"process": SUBMITTER}

    # -- waiting on the app ---------------------------------------------------------
    def held_call(self, waiting: Any, submitted: Future[str], timeout: float) -> Any:
        """What ``waiting.wait()`` returns (a gate's held call, a kill's record) once it comes; a submission
        that failed meanwhile is raised at once (no call will come), and a wait that times out names the
        calls the fake refused to serve."""
        deadline = time.monotonic() + timeout
        while True:
            if submitted.done() and submitted.exception() is not None:
                raise SubmitError(f"no paid call came: the submission failed: {submitted.exception()}")
            try:
                return waiting.wait(timeout=max(0.1, min(POLL, deadline - time.monotonic())))
            except WaitTimeout as exc:
                if time.monotonic() >= deadline:
                    refused = refusals(self.jq.paidapi.ledger())
                    raise WaitTimeout(f"no paid call was held within {timeout:g} s"
                                      + (f"; {refused}" if refused else "; the ledger holds no call at all")) from exc

    def wait_for_end(self, job_id: str, timeout: float) -> dict[str, Any] | None:
        """The job's row once it is in a terminal state, or None after ``timeout`` (the invariants say why)."""
        try:
            return self.wait_for(job_id, timeout=timeout)
        except WaitTimeout:
            return None

    def task_limits(self, job_id: str, timeout: float = 30.0) -> dict[str, Any]:
        """The time limits the job's task runs with (``task``, ``soft_time_limit``, ``time_limit``: seconds or
        None), as the instrumentation saw them when the task started."""
        instrument = self.jq.stack.instrument
        if instrument is None:
            raise SubmitError("the task's limits are read by the instrumentation: config has instrument = false")

        def started() -> dict[str, Any] | None:
            runs = [r for r in instrument.records() if r.get("type") == "invoke" and r.get("name") == "task"
                    and str(r.get("job_id")) == str(job_id)]
            data = runs[0]["data"] if runs else None
            return None if data is None else {"task": data.get("task"), "time_limit": data.get("time_limit"),
                                              "soft_time_limit": data.get("soft_time_limit")}
        return wait_until(started, timeout=timeout, what=f"a task run for job {job_id}")

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
        """Insert a job row directly (a row the app left behind, say); its id.

        A text id column without a default in the database (the app makes its ids, as uuid4) gets one.
        """
        t = self.table
        values = self.row_values(values)
        query = sql.SQL("INSERT INTO {} ({}) VALUES ({}) RETURNING {}::text").format(
            sql.Identifier(t.table), sql.SQL(", ").join(map(sql.Identifier, values)),
            sql.SQL(", ").join(sql.Placeholder() * len(values)), sql.Identifier(t.id_column))
        return cast("str", self.query(query, *values.values())[0][0])

    def row_values(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` for a new job row: with a fresh id when the id column is text with no default in
        the database (an app that makes its ids itself, as uuid4)."""
        if self.table.id_column in values or not self._id_needs_value():
            return dict(values)
        return {self.table.id_column: str(uuid.uuid4()), **values}

    def _id_needs_value(self) -> bool:
        rows = self.query("SELECT data_type, column_default FROM information_schema.columns "
                          "WHERE table_name = %s AND column_name = %s", self.table.table, self.table.id_column)
        return bool(rows) and rows[0][1] is None and rows[0][0] in ("text", "character varying", "uuid", "character")

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
