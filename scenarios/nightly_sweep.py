"""refapp's sweep workload for `jobquake nightly` (``[tool.jobquake.nightly] sweep`` / ``sweep_record``).

Each round adds a few open, past-due invoices and starts the overdue
sweep through the API; at the end every sweep run becomes a ``sweep``
event for ``sweep_complete``, as in the sweep scenarios. A nightly adds
two things a single scenario does not meet: a run whose worker a fault
killed stays ``running`` for ever (recorded ``abandoned`` once a later run
came after it; its rows are still judged), and a poison row healed while a
run was going is gone from the table (the run handled it as a row paid
since it was listed: counted processed, and so judged).
"""
from __future__ import annotations

import datetime as dt
import time
from typing import Any

from harness import wait_until
from harness.errors import WaitTimeout
from harness.history import vocabulary as v
from scenarios import sweep_support as sweeps
from scenarios.refapp_client import RefApp

ROWS_PER_ROUND = 3
END_WITHIN_S = 20.0  # the last round's sweep is queued behind the last jobs


def trigger(run: Any, round_: int) -> None:
    """Add ``ROWS_PER_ROUND`` overdue invoices and start a sweep (POST /sweeps/overdue)."""
    refapp = RefApp(run)
    try:
        sweeps.add_overdue_invoices(refapp, ROWS_PER_ROUND, customer=f"nightly-{round_}")
        refapp.run_sweep()
    finally:
        refapp.http.close()


def record(run: Any) -> list[dict[str, Any]]:
    """Wait for the sweep runs to end, then record each as a ``sweep`` event; the events' data."""
    refapp = RefApp(run)
    try:
        wait_until(lambda: all(r["state"] != "running" for r in sweeps.sweep_runs(refapp)),
                   timeout=END_WITHIN_S, interval=0.2, what="the sweep runs to end")
    except WaitTimeout:
        pass  # a run that never ends is judged as it is
    runs = sweeps.sweep_runs(refapp)
    existing = {row[0] for row in refapp.query("SELECT id FROM invoices")}
    reports = []
    for index, sweep_run in enumerate(runs):
        later_ended = any(r["state"] != "running" for r in runs[index + 1:])
        data = _report(refapp, sweep_run, existing, abandoned=sweep_run["state"] == "running" and later_ended)
        wall = sweep_run["finished_at"].timestamp() if sweep_run["finished_at"] else time.time()
        run.history.record(v.SWEEP, "ok", v.SWEEP, data=data, wall=wall)
        reports.append(data)
    refapp.http.close()
    return reports


def _report(refapp: RefApp, sweep_run: dict[str, Any], existing: set[int], *, abandoned: bool) -> dict[str, Any]:
    """The run's report: a row counts processed when it was overdue (by this run or a concurrent one)
    by the time the run ended, or gone from the table (a poison row healed) in a run that ended done."""
    until = sweep_run["finished_at"] or dt.datetime.now(dt.timezone.utc)
    eligible = list(sweep_run["eligible_ids"])
    marked = {row for (row,) in refapp.query(
        "SELECT id FROM invoices WHERE id = ANY(%s) AND status = 'overdue' AND overdue_at <= %s", eligible, until)}
    # a row gone from the table counts as handled only in a run that ended saying it handled it
    vanished = ({row for row in eligible if row not in existing} - set(sweep_run["failed_ids"])
                if sweep_run["state"] == "done" else set())
    data = sweeps._report(sweep_run, marked | vanished)
    data["vanished"] = sorted(vanished)
    if abandoned:  # no summary of its own: what it did is what the table shows
        data.update(state="abandoned", unreached=[])
        data["summary"] = {"processed": len(data["processed"]), "failed": len(data["failed"])}
    return data
