"""After a scenario: read every source of evidence into the run's history, then take the final snapshot.

``collect(run)`` calls each function of ``SOURCES`` in order, then
``final_snapshot``. A source reads one kind of evidence the app or the
stack produced during the run and records it in ``run.history``: the
events themselves (converted by ``events.py`` next to the readers, or by
``harness.history.converters``), and, when a checker needs to tell "read, and
empty" from "never read" (``checks/needs.py``), one
``harness ok read {source, records}`` event (``read(run, SOURCE, n)``).
A source that cannot read its evidence raises: the session reports the
scenario as broken rather than judge it without that evidence.

**Adding a source** (say Postgres ``pg_stat_activity`` at settle, or the
instrumentation's pool check-outs): put its reader in its own module next to
the others (``harness/evidence/<x>.py``), add its source name and event
names to ``harness/history/vocabulary.py``, write one function
``def my_source(run: Run) -> None`` that reads, records the events
and the ``read`` event, and append it to ``SOURCES``. Order matters only
where a source reads what an earlier one recorded (``saved_results`` leaves
alone the results a scenario recorded itself). A checker then declares the
evidence as a need (``@invariant(name, needs=(...))``) and is ``unknown``
when the source read nothing.

The run is named by the ``Run`` protocol below (what collecting reads of a
``harness.run.Run``), so that evidence stays below the run that uses its
readers.
"""
from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Protocol

import psycopg

from harness.evidence.connections import (DEFAULT_GRACE_S, HeldCheckout, IdleSession, app_sessions, backend_pids,
                                          checkouts_out, idle_in_transaction, outlasting, pools_used)
from harness.evidence.derive import attempt_deaths
from harness.evidence.events import events_from_attempt_deaths, events_from_hard_limit_kills
from harness.evidence.sweep_rows import predicate_rows
from harness.evidence.worker_logs import hard_limit_kills as kills_in_log, tasks_received
from harness.history import vocabulary as v
from harness.history.clock import WALL_CLOCK, wall_to_monotonic
from harness.history.converters import events_from_ledger, events_from_triggers
from harness.history.history import History
from harness.history.snapshot import Snapshot
from harness.history.timing import committed_data
from harness.instrument.control import events_from_records
from harness.interference import record_interference as control_state  # the control APIs: what others set
from harness.limits import declared_limits, saved_results as read_saved_results

class Run(Protocol):
    """What collecting reads of a ``harness.run.Run``: its controls, its history, its evidence folder."""

    config: Any  # harness.config.Config
    history: Any  # harness.history.Recorder
    paidapi: Any  # its ledger(); interference() and stats() for the control state
    proxy: Any  # its interference() and refused(), for the control state
    failpoints: Any  # its triggers()
    stack: Any  # its services(), workers, instrumentation, app_environment()
    jobs: Any  # harness.evidence.JobTable
    job_logs: Any  # harness.evidence.job_logs.JobLogs
    artifacts: Path
    opened: float
    settle_outcome: Any  # harness.pending.SettleOutcome | None: the last settle's
    streams: Any  # harness.streams.StatusStreams: finished after the snapshot

    @property
    def database_dsn(self) -> str: ...

    def catch_up(self) -> None: ...

    def service_log(self, service: Any) -> str: ...


Source = Callable[[Run], None]


def read(run: Run, source: str, records: int, **counted: Any) -> None:
    """Record that ``source`` was read and held ``records`` records (plus anything else it counted)."""
    run.history.record(v.HARNESS, "ok", v.READ, data={"source": source, "records": records, **counted})


def paid_calls(run: Run) -> None:
    """The paid API's ledger: every call, when it started and ended, what it billed."""
    ledger = run.paidapi.ledger()
    run.history.extend(events_from_ledger(ledger))
    read(run, v.LEDGER_SOURCE, len(ledger))


def failpoint_triggers(run: Run) -> None:
    """Every failpoint that fired, in which process."""
    run.history.extend(events_from_triggers(run.failpoints.triggers()))


def instrumentation(run: Run) -> None:
    """What the instrumentation loaded into the app's processes saw (task runs, job ids)."""
    instrument = getattr(run.stack, "instrument", None)
    if instrument is not None:
        run.history.extend(events_from_records(instrument.records()))


def job_logs(run: Run) -> None:
    """The job state log and heartbeat log: their tail (the rest was read during the run), and the
    attempts the state log shows the job left behind."""
    run.catch_up()
    changes = run.job_logs.changes
    read(run, v.STATE_LOG_SOURCE, len(changes))  # the rows read in all, during the run and now
    run.history.extend(events_from_attempt_deaths(attempt_deaths(changes, run.jobs.terminal_states)))
    beats = run.job_logs.beats
    if beats is not None:  # config names a heartbeat column: the app's liveness evidence
        read(run, v.HEARTBEAT_SOURCE, len(beats))


def hard_limit_kills(run: Run) -> None:
    """The Celery workers' logs of this test: tasks killed at their hard time limit."""
    kills, received = [], 0
    for worker in run.stack.workers.workers:
        text = run.service_log(worker)
        kills += kills_in_log(worker.name, text)
        received += tasks_received(text)
    run.history.extend(events_from_hard_limit_kills(kills, wall_to_monotonic()))
    read(run, v.WORKER_LOG_SOURCE, len(kills), tasks_received=received)


def wall_clock_steps(run: Run) -> None:
    """Steps of the machine's wall clock during the run: shown on the timeline, they explain odd wall times."""
    for at, step in WALL_CLOCK.steps_since(run.opened):
        run.history.record(v.HARNESS, "ok", v.WALL_CLOCK_STEPPED, t=at, data={"step_s": step})


def app_limits(run: Run) -> None:
    """The app's declared layered limits (config ``limits``), as its processes see them: called with
    their environment, so a setting or a mutant switch counts."""
    spec = run.config.limits
    if spec:
        declared = declared_limits(spec, run.config.time_scale, run.stack.app_environment(), run.config.root)
        run.history.record(v.BUDGET, "ok", v.LIMITS, data=declared)


def saved_results(run: Run) -> None:
    """The app's saved paid-step results (config ``results_query``), for the provenance check."""
    query = run.config.results_query
    if not query or run.history.events().by_source(v.WRITE, name=v.STEP_SAVED):
        return  # not configured, or the scenario records its own
    rows = read_saved_results(query, run.database_dsn)
    to_monotonic = wall_to_monotonic()  # one converter for the whole batch
    for job_id, step, attempt, call_id, saved, *rest in rows:
        wall = float(saved) if saved is not None else time.time()
        run.history.record(v.WRITE, "ok", v.STEP_SAVED, job_id=str(job_id), attempt=attempt, t=to_monotonic(wall),
                           wall=wall, data={"step": step, "table": "results", "attempt": attempt, "refused": False,
                                            "call_id": None if call_id is None else str(call_id),
                                            **committed_data(rest[0] if rest else None, to_monotonic)})


def held_connections(run: Run, grace: float = DEFAULT_GRACE_S) -> None:
    """Once the run settled: each app process's pool check-outs still out (``connection fail held``) and its
    database sessions idle in a transaction (``connection fail idle_in_transaction``); a run that did not
    settle is not read, since its work may still hold what it took."""
    if run.settle_outcome is None or not run.settle_outcome.settled:
        return
    instrument = getattr(run.stack, "instrument", None)
    pids: list[int] = []
    if instrument is not None:
        held = outlasting(lambda: checkouts_out(instrument.pools(), run.opened), HeldCheckout.key, grace)
        pools = instrument.pools()
        used, pids = pools_used(pools, run.opened), backend_pids(pools)
        read(run, v.POOL_SOURCE, len(used), processes=used)
        for checkout in held:
            run.history.record(v.CONNECTION, "fail", v.HELD, data=asdict(checkout))
    try:
        seen = app_sessions(run.database_dsn, pids)
        idle = outlasting(lambda: idle_in_transaction(app_sessions(run.database_dsn, pids)), IdleSession.key, grace)
    except psycopg.Error:  # the database is not there to ask: that half of the evidence is missing
        return
    read(run, v.SESSION_SOURCE, len(seen))
    for session in idle:
        run.history.record(v.CONNECTION, "fail", v.IDLE_IN_TRANSACTION, data=asdict(session))


def sweep_predicate(run: Run) -> None:
    """The rows the app's sweep must still handle, by its own predicate (config ``sweep_predicate``), once
    the scenario's sweep runs were recorded: what ``sweeps_cover_predicate`` compares them with."""
    query = run.config.sweep_predicate
    if query and run.history.events().by_source(v.SWEEP, name=v.SWEEP):
        rows = predicate_rows(run.database_dsn, query)
        run.history.record(v.SWEEP, "ok", v.PREDICATE, data={
            "rows": [row for row, _ in rows], "changed": {row: at for row, at in rows if at is not None},
            "query": query})


SOURCES: list[Source] = [paid_calls, failpoint_triggers, instrumentation, job_logs, hard_limit_kills,
                         wall_clock_steps, app_limits, saved_results, sweep_predicate, held_connections,
                         control_state]


def final_snapshot(run: Run) -> Snapshot:
    """Every job row as the run left it, saved as ``snapshot.json`` in the run's artifacts."""
    snapshot = run.jobs.snapshot(run.database_dsn)
    read(run, v.SNAPSHOT_SOURCE, len(snapshot.jobs))
    snapshot.save(run.artifacts / "snapshot.json")
    return snapshot


def collect(run: Run) -> tuple[History, Snapshot]:
    """Read every source into ``run.history``; the history as it now stands, and the final snapshot."""
    for source in SOURCES:
        source(run)
    snapshot = final_snapshot(run)
    run.streams.finish(run.history.events(), snapshot)  # what the status streams told, given time to catch up
    return run.history.events(), snapshot


def save_logs(run: Run) -> Path:
    """Write each service's log lines from this run into ``<artifacts>/logs`` (for people, not checkers)."""
    folder = run.artifacts / "logs"
    folder.mkdir(exist_ok=True)
    for service in run.stack.services():
        (folder / f"{service.name}.log").write_text(run.service_log(service))
    zygote = getattr(run.stack.backend, "zygote", None)  # its preload report (what it could not import) is written once, at its start
    if zygote is not None and zygote.log_path.exists():
        (folder / "zygote.log").write_text(zygote.log_path.read_text(errors="replace"))
    return folder
