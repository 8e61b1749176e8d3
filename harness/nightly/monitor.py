"""The continuous check: every tick, read the job table and report jobs stuck past their bound.

A job is stuck when it is not terminal ``job_bound`` seconds after the
latest of: its acceptance, the last heal of a fault that may legitimately
delay it (while such a fault is active, no job is judged), and the moment a
job accepted after it completed (a job queued behind a backlog is waiting,
not stuck; a job the app lost is overtaken by every job after it). Faults that only
switch a defence off do not delay the bound: the app must still finish its
jobs in time through its other defences, except a job whose message a
fault may have destroyed meanwhile (``harness.nightly.transit``): only the
defence brings that back, so it is judged from the defence's return
(recorded once, ``nightly ok in_transit``). Each stuck job is recorded once
(``nightly fail stuck``) while the run goes on, and judged at the end by
the ``no_job_stuck`` invariant. Each tick is recorded too (``nightly ok
tick``): with no tick there is no evidence, and the invariant says unknown.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import psycopg
from psycopg import sql

from harness.evidence import JobTable
from harness.nightly.nemesis import SOURCE, Nemesis
from harness.nightly.spend import SpendWatch
from harness.nightly.transit import Change, Loss, changes_by_job, lost_by
from harness.nightly.workload import Workload

TICK_S = 1.0
Looked = tuple[list[Loss], dict[str, list[Change]]]  # a tick's message losses, and the job state changes they need


@dataclass
class Status:
    """One tick's picture of the run, for the progress display and the report."""

    elapsed: float = 0.0
    states: dict[str, int] = field(default_factory=dict)
    submitted: int = 0
    accepted: int = 0
    refused: int = 0
    done: int = 0
    failed: int = 0
    in_flight: int = 0
    stuck: int = 0
    faults_injected: int = 0
    faults_active: int = 0
    faults_refused: int = 0
    duplicate_calls: int = 0
    error: str | None = None


def job_states(jobs: JobTable, conn: psycopg.Connection, ids: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    """(how many jobs are in each state, the current state of the jobs ``ids``).

    Only the jobs still pending are read row by row: a long run's finished
    jobs are counted by Postgres, not shipped to the harness every tick.
    """
    table, id_col, state_col = (sql.Identifier(jobs.table), sql.Identifier(jobs.id_column),
                                sql.Identifier(jobs.state_column))
    counts = sql.SQL("SELECT {}::text, count(*) FROM {} GROUP BY 1").format(state_col, table)
    pending = sql.SQL("SELECT {}::text, {}::text FROM {} WHERE {}::text = ANY(%s)").format(
        id_col, state_col, table, id_col)
    return dict(conn.execute(counts).fetchall()), dict(conn.execute(pending, (ids,)).fetchall())


class Monitor:
    """Ticks in its own thread; ``status`` is the latest picture; ``on_tick`` is called with it."""

    def __init__(self, run: Any, workload: Workload, nemesis: Nemesis, *, job_bound: float,
                 on_tick: Callable[[Status], None] | None = None, ledger_every: int = 5,
                 on_stuck: Callable[[str], None] | None = None):
        self.run = run
        self.workload = workload
        self.nemesis = nemesis
        self.job_bound = job_bound
        self.on_tick = on_tick
        self.on_stuck = on_stuck
        self.ledger_every = ledger_every
        self.status = Status()
        self.stuck: dict[str, float] = {}  # job id -> run seconds when it was found stuck
        self.completed: dict[str, float] = {}  # job id -> run seconds when it was first seen terminal
        # job id -> the fault that may have lost its message while a defence was off (harness.nightly.transit)
        self.in_transit: dict[str, Loss] = {}
        self.ticks = 0
        self._duplicates = 0  # read from the ledger every few ticks: it grows with the run
        self._spend = SpendWatch(lambda after: run.paidapi.ledger(after=after))
        self._conn: psycopg.Connection | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="nightly-monitor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(TICK_S):
            self.tick()

    def tick(self) -> Status:
        """Read the table, judge the jobs, publish the status (also called once at the end)."""
        status = Status(elapsed=round(self.nemesis.now(), 1))
        try:
            waiting = [job for job in self.workload.accepted_at() if job not in self.completed]
            counts, states = job_states(self.run.jobs, self._connection(), waiting)
            self._judge(counts, states, status)
            if self.ticks % self.ledger_every == 0:
                self._duplicates = self._spend.update()
            status.duplicate_calls = self._duplicates
        except Exception as exc:  # noqa: BLE001 - a database down under a fault is a moment, not an end
            status.error = f"{type(exc).__name__}: {exc}"
            self._disconnect()  # the next tick connects again
        if self.ticks % self.ledger_every == 0:
            self._catch_up()
        stats = self.workload.stats
        status.submitted, status.accepted, status.refused = stats.submitted, stats.accepted, stats.refused
        status.faults_injected, status.faults_active, status.faults_refused = self.nemesis.counts()
        status.stuck = len(self.stuck)
        self.ticks += 1
        if status.error is None:
            self.run.history.record(SOURCE, "ok", "tick", data={"t": status.elapsed, "in_flight": status.in_flight})
        self.status = status
        if self.on_tick is not None:
            self.on_tick(status)
        return status

    def _catch_up(self) -> None:
        """Move the job logs' new rows into the history now, so the end-of-run collection reads only the tail."""
        catch_up = getattr(self.run, "catch_up", None)
        if catch_up is None:
            return
        try:
            catch_up()
        except Exception:  # noqa: BLE001 - a database down under a fault: the next call (or the end) reads it
            pass

    def _judge(self, counts: dict[str, int], states: dict[str, str], status: Status) -> None:
        terminal = set(self.run.jobs.terminal_states)
        accepted = self.workload.accepted_at()  # in acceptance order
        now = time.monotonic() - self.nemesis.started
        status.states = dict(counts)
        # the app's success state is the first of its terminal states (refapp "done", tickets "summarised")
        success = self.run.jobs.terminal_states[0] if self.run.jobs.terminal_states else "done"
        status.done = status.states.get(success, 0)
        status.failed = sum(n for s, n in status.states.items() if s in terminal and s != success)
        for job_id in accepted:
            if states.get(job_id) in terminal:
                self.completed.setdefault(job_id, now)
        pending = [job for job in accepted if job not in self.completed]
        status.in_flight = len(pending)
        active, last_heal = self.nemesis.bound_start()
        if active:
            return
        overtaken = self._overtaken_since(list(accepted))
        looked: Looked | None = None  # read once a tick, and only if a job is past its bound
        for job_id in pending:
            since = max(accepted[job_id] - self.nemesis.started, last_heal, overtaken[job_id])
            if job_id in self.stuck or now - since <= self.job_bound:
                continue
            if looked is None and job_id not in self.in_transit:
                looked = self._losses_and_changes()
            loss = self._lost_in_transit(job_id, accepted[job_id], looked)
            if loss is not None:  # its bound runs from the return of the defence that was off
                returned = self.nemesis.windows[loss.defence].healed_at
                if returned is None or now - max(since, returned) <= self.job_bound:
                    continue
                since = max(since, returned)
            self._report(job_id, states.get(job_id), now, since)

    def _losses_and_changes(self) -> Looked:
        """The faults that may have destroyed messages while a defence was off, and, only if there are any,
        each job's state changes so far (the job state log the history caught up with), marked by writer."""
        losses = self.nemesis.losses()
        if not losses:
            return losses, {}
        workers = getattr(self.run, "workers", None)
        names = [w.name for w in workers.workers] if workers is not None else []
        return losses, changes_by_job(self.run.history.events(), names)

    def _lost_in_transit(self, job_id: str, accepted: float, looked: Looked | None) -> Loss | None:
        """The fault that may have destroyed the job's message while a defence was off (recorded once), if any."""
        if job_id in self.in_transit:
            return self.in_transit[job_id]
        losses, changes = looked or ([], {})
        loss = lost_by(accepted, changes.get(job_id, []), losses)
        if loss is not None:
            self.in_transit[job_id] = loss
            self.run.history.record(SOURCE, "ok", "in_transit", job_id=job_id, data={
                "fault": loss.index, "kind": loss.fault, "at": round(loss.t - self.nemesis.started, 2),
                "defence": loss.defence})
        return loss

    def _connection(self) -> psycopg.Connection:
        """One connection for every tick: connecting anew each second cost more than the queries."""
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self.run.database_dsn, autocommit=True, connect_timeout=5)
        return self._conn

    def _disconnect(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def judged_before(self, t: float) -> bool:
        """True once every job accepted before run second ``t`` has ended, been reported stuck, or been found
        lost on the way while the defence was off (which waits for the defence: it may return now)."""
        cutoff = self.nemesis.started + t
        judged = set(self.completed) | set(self.stuck) | set(self.in_transit)
        return all(job in judged for job, accepted in self.workload.accepted_at().items() if accepted < cutoff)

    def _overtaken_since(self, order: list[str]) -> dict[str, float]:
        """Per job, when a job accepted after it first completed (inf: none yet).

        A job behind a backlog is not stuck: the jobs after it are not done
        either. A job the app lost is overtaken by every job after it.
        """
        since: dict[str, float] = {}
        earliest = math.inf
        for job_id in reversed(order):
            since[job_id] = earliest
            earliest = min(earliest, self.completed.get(job_id, math.inf))
        return since

    def _report(self, job_id: str, state: str | None, now: float, since: float) -> None:
        self.stuck[job_id] = round(now, 2)
        self.run.history.record(SOURCE, "fail", "stuck", job_id=job_id, data={
            "state": state, "found_at": self.stuck[job_id], "since": round(since, 2), "bound": self.job_bound})
        if self.on_stuck is not None:
            self.on_stuck(job_id)

    def stop(self) -> Status:
        """Stop ticking; returns one last tick's status, then closes the connection to the job table."""
        self._stop.set()
        self._thread.join(30)
        try:
            return self.tick()
        finally:
            self._disconnect()
