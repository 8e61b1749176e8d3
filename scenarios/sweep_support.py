"""What the sweep scenarios share: invoices to sweep, waiting for a sweep run, and its evidence.

refapp records each run of the overdue sweep in ``sweep_runs`` (which
invoices were eligible, how many it processed, which failed, how it ended).
``record_sweeps`` turns each run into the ``sweep ok sweep`` event the
``sweep_complete`` checker reads, taking ``processed`` from the invoices
themselves (the ones this run actually marked ``overdue``, as the database
says) and the summary from what the run claims, so a run that lies about
its counts is caught as surely as one that skips rows.
"""
from __future__ import annotations

import datetime as dt
import time
from typing import Any

from harness import wait_until
from harness.errors import WaitTimeout
from harness.history import vocabulary as v
from harness import Run
from scenarios.refapp_client import RefApp

PAST_DUE = dt.timedelta(days=40)  # comfortably past due: the sweep must pick these up

RUN_COLUMNS = ("id", "state", "reason", "eligible_ids", "processed", "failed", "failed_ids",
               "started_at", "finished_at")


def past_due_date() -> str:
    """A due date the sweep treats as overdue (ISO text, so it reads well in the fault's record)."""
    return (dt.date.today() - PAST_DUE).isoformat()


def add_overdue_invoices(refapp: RefApp, count: int, *, customer: str) -> list[int]:
    """Insert ``count`` open, past-due invoices with a positive amount; their ids, in order."""
    return [refapp.query("INSERT INTO invoices (customer, amount, due_on) VALUES (%s, %s, %s) RETURNING id",
                         f"{customer}-{n}", "100.00", past_due_date())[0][0]
            for n in range(count)]


def invoice_status(refapp: RefApp, ids: list[int]) -> dict[int, str]:
    """Each invoice's status as the database has it now."""
    return dict(refapp.query("SELECT id, status FROM invoices WHERE id = ANY(%s)", ids))


def sweep_runs(refapp: RefApp) -> list[dict[str, Any]]:
    """Every row of ``sweep_runs``, oldest first."""
    rows = refapp.query(f"SELECT {', '.join(RUN_COLUMNS)} FROM sweep_runs ORDER BY id")
    return [dict(zip(RUN_COLUMNS, row)) for row in rows]


def wait_for_sweep_run(refapp: RefApp, *, start_within: float, end_within: float) -> dict[str, Any]:
    """The scenario's first sweep run, once it has ended or ``end_within`` seconds after it started.

    A run that never starts is a broken scenario (WaitTimeout). A run that
    never ends is a finding, not an error: the run is returned still
    ``running`` and the ``sweep_complete`` checker says what it left undone.
    The database is fresh for each scenario, so the first run is the one
    the scenario started; any later run (a redelivered task) is recorded by
    ``record_sweeps`` but not waited for.
    """
    wait_until(lambda: sweep_runs(refapp), timeout=start_within, what="a sweep run to start")
    try:
        wait_until(lambda: sweep_runs(refapp)[0]["state"] != "running", timeout=end_within,
                   interval=0.05, what="the sweep run to end")
    except WaitTimeout:
        pass
    return sweep_runs(refapp)[0]


def wait_for_sweep_runs(refapp: RefApp, count: int, *, end_within: float) -> list[dict[str, Any]]:
    """The scenario's sweep runs once ``count`` of them have ended (or ``end_within`` seconds on)."""
    try:
        wait_until(lambda: len([r for r in sweep_runs(refapp) if r["state"] != "running"]) >= count,
                   timeout=end_within, interval=0.05, what=f"{count} sweep run(s) to end")
    except WaitTimeout:
        pass  # a run that never ends is judged as it is
    return sweep_runs(refapp)


def record_sweeps(jq: Run, refapp: RefApp) -> list[dict[str, Any]]:
    """Record every sweep run as a ``sweep`` event for ``sweep_complete``; the events' data."""
    reports = []
    for run in sweep_runs(refapp):
        data = _report(run, _marked_by(refapp, run))
        wall = run["finished_at"].timestamp() if run["finished_at"] else time.time()
        jq.history.record(v.SWEEP, "ok", v.SWEEP, data=data, wall=wall)
        reports.append(data)
    return reports


def _marked_by(refapp: RefApp, run: dict[str, Any]) -> set[int]:
    """The eligible invoices this run marked overdue: their ``overdue_at`` falls within the run."""
    until = run["finished_at"] or dt.datetime.max.replace(tzinfo=dt.timezone.utc)
    rows = refapp.query("SELECT id FROM invoices WHERE id = ANY(%s) AND status = 'overdue' "
                        "AND overdue_at BETWEEN %s AND %s", list(run["eligible_ids"]), run["started_at"], until)
    return {row[0] for row in rows}


def _report(run: dict[str, Any], marked: set[int]) -> dict[str, Any]:
    eligible = list(run["eligible_ids"])
    failed = list(run["failed_ids"])
    unreached: list[int] = []
    if run["state"] == "timed_out":
        # A run the deadline stopped answers for the rows it reached; the rows after
        # the last one it handled stay open for the next run (listed, not judged).
        handled = [i for i, row in enumerate(eligible) if row in marked or row in failed]
        reached = handled[-1] + 1 if handled else 0
        eligible, unreached = eligible[:reached], eligible[reached:]
    return {"run_id": run["id"], "state": run["state"], "reason": run["reason"],
            "eligible": eligible, "processed": [row for row in eligible if row in marked],
            "failed": failed, "summary": {"processed": run["processed"], "failed": run["failed"]},
            "unreached": unreached, "started": run["started_at"].timestamp()}


# -- the worker logs: the warning an on-call person alerts on --------------------------
def worker_log_marks(jq: Run) -> dict[str, int]:
    """Where each worker's log ends now: pass to ``worker_log_lines`` to read only what follows."""
    return {worker.name: worker.log_offset() for worker in jq.workers}


def worker_log_lines(jq: Run, marks: dict[str, int], *words: str) -> list[str]:
    """Lines written by any worker since ``marks`` that contain every one of ``words``."""
    lines = []
    for worker in jq.workers:
        for line in worker.logs_since(marks.get(worker.name, 0)).splitlines():
            if all(word in line for word in words):
                lines.append(line)
    return lines
