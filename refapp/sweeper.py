"""``python -m refapp.sweeper``: find jobs nobody is working on, and re-send them or hand them to a person.

The last line of defence, for the day everything else has a bug:

- a running job whose heartbeat is stale: its attempt is declared dead (the
  job goes back to ``queued``, which fences out that attempt's late writes)
  and the job is sent again through the outbox; the next claim is a new
  attempt with a new fencing token;
- a queued job with no unsent outbox message that has waited far longer
  than any backlog explains: its message was lost, send it again;
- either, once the bound is reached (``max_attempts`` attempts, or as many
  sends): ``needs_human``, with a reason a person can act on.

Each job is handled in its own transaction, and a job whose handling fails
is that job's problem: the pass goes on with the others (a sweep that ends
at its first bad row meets it first again in the next pass, and every job
behind it waits for ever). When the database refused the job's own change
(a rule the row breaks, a value out of range), sending it again cannot work:
it goes to a person, saying why. Any other failure (the database away for a
moment) leaves it to the next pass. A pass that failed on a job says so at
warning level.
"""
from __future__ import annotations

import logging
import sys
import threading
from dataclasses import dataclass, field

import sqlalchemy as sa

from refapp import budgets, events, jobstore, settings
from refapp.attempt import NEEDS_HUMAN, QUEUED, RUNNING
from refapp.db import NOW, engine, jobs, outbox
from refapp.failpoints import SWEEPER_BEFORE_RESEND, SWEEPER_HANDLING, SWEEPER_RESENT, SWEEPER_TICK, failpoint
from refapp.loop import run_until_signalled
from refapp.mutants import mutant

log = logging.getLogger("refapp.sweeper")


@dataclass
class SweepReport:
    """What one pass did, by job id."""

    resent: list[str] = field(default_factory=list)
    needs_human: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # handling raised; left to a person or the next pass


def _stale_running() -> sa.ColumnElement[bool]:
    # abandoned means "stopped beating", not "running for long": a slow job beats on
    since = jobs.c.started_at if mutant("sweeper-judges-by-start-time") else jobs.c.heartbeat_at
    return sa.and_(jobs.c.state == RUNNING, jobstore.older_than(since, budgets.scaled("heartbeat_stale")))


def _lost_queued() -> sa.ColumnElement[bool]:
    unsent = sa.exists().where(outbox.c.job_id == jobs.c.id, outbox.c.sent_at.is_(None), outbox.c.failed_at.is_(None))
    return sa.and_(jobs.c.state == QUEUED, sa.not_(unsent),
                   jobstore.older_than(jobs.c.updated_at, budgets.scaled("queued_too_long")))


def sweep_once() -> SweepReport:
    """One pass over the job table."""
    report = SweepReport()
    failpoint(SWEEPER_TICK)
    with engine().connect() as conn:
        candidates = conn.execute(sa.select(jobs.c.id, _stale_running().label("stale"))
                                  .where(sa.or_(_stale_running(), _lost_queued()))
                                  .order_by(jobs.c.updated_at)).all()
    if candidates and mutant("no-sweeper"):
        return report  # the wrong shape: what the pass found is never acted on
    for job_id, listed_stale in candidates:
        failpoint(SWEEPER_HANDLING, job_id=job_id)
        try:
            _handle(job_id, listed_stale, report)
        except Exception as exc:  # noqa: BLE001 - per-job isolation: one bad job must not end the pass
            if mutant("sweeper-no-per-job-isolation"):
                raise  # the wrong shape: the pass ends here, and this job comes first again in the next
            _failed(job_id, exc, report)
    if report.failed:
        log.warning("sweeper pass: resent=%d needs_human=%d failed=%d", len(report.resent),
                    len(report.needs_human), len(report.failed))
    return report


def _failed(job_id: str, exc: Exception, report: SweepReport) -> None:
    """A job whose handling raised: a person's, when the database refused its own change; else the next pass's."""
    report.failed.append(job_id)
    log.warning("job %s: the sweeper could not handle it: %s: %s", job_id, type(exc).__name__, exc)
    if isinstance(exc, (sa.exc.IntegrityError, sa.exc.DataError)):
        first_line = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else ""
        _give_to_person(job_id, f"could not be sent again: {type(exc.orig).__name__}: {first_line}", report)


def _give_to_person(job_id: str, why: str, report: SweepReport) -> None:
    """Hand a job the sweeper cannot send again to a person (if it is still abandoned)."""
    with engine().begin() as conn:
        job = conn.execute(sa.select(jobs.c.attempt, jobs.c.reason)
                           .where(jobs.c.id == job_id, sa.or_(_stale_running(), _lost_queued()))
                           .with_for_update(skip_locked=True)).first()
        if job is None:
            return
        reason = f"needs a person: {why} (last: {job.reason or 'none'})"
        conn.execute(sa.update(jobs).where(jobs.c.id == job_id)
                     .values(state=NEEDS_HUMAN, reason=reason, finished_at=NOW, updated_at=NOW))
    report.needs_human.append(job_id)
    log.warning("job %s: %s", job_id, reason)
    events.publish(events.job_event(job_id, NEEDS_HUMAN, reason, job.attempt))


def _handle(job_id: str, listed_stale: bool, report: SweepReport) -> None:
    """Re-send one abandoned job, or give it to a person; skip it if it changed meanwhile."""
    config = settings.get()
    with engine().begin() as conn:
        # judged again under the row's lock: another sweeper, or the job itself, may have moved it since
        # it was listed (a second sweeper re-sending a job the first one already sent would take it from
        # the attempt that claimed it since, and a job that finished since is final)
        job = _locked(conn, job_id, sa.or_(_stale_running(), _lost_queued()))
        if job is None and mutant("sweeper-resends-finished"):
            job = _locked(conn, job_id, sa.true())  # the wrong shape: "it was on the list", so it is handled
        elif job is None and mutant("sweeper-rescues-without-recheck"):
            # the wrong shape: the lock is taken by id alone, and the job is handled as it was listed
            job = conn.execute(sa.select(jobs, sa.literal(listed_stale).label("stale"))
                               .where(jobs.c.id == job_id)
                               .with_for_update(of=jobs, skip_locked=True)).mappings().first()
        if job is None:
            return
        if job["stale"]:
            why = f"attempt {job['attempt']} stopped heartbeating"
            exhausted = job["attempt"] >= config.max_attempts
        else:
            why = f"queued with no message in flight after {job['dispatches']} sends"
            exhausted = job["dispatches"] >= config.max_attempts
        if exhausted:
            state, reason = NEEDS_HUMAN, f"needs a person: {why}; gave up (last: {job['reason'] or 'none'})"
            conn.execute(sa.update(jobs).where(jobs.c.id == job_id)
                         .values(state=state, reason=reason, finished_at=NOW, updated_at=NOW))
            report.needs_human.append(job_id)
        else:
            failpoint(SWEEPER_BEFORE_RESEND, job_id=job_id, attempt=job["attempt"])
            state, reason = QUEUED, f"{why}; sent again"
            conn.execute(sa.update(jobs).where(jobs.c.id == job_id).values(
                state=state, reason=reason, dispatches=jobs.c.dispatches + 1, updated_at=NOW))
            jobstore.add_outbox(conn, job_id, job["route"], dispatch=job["dispatches"] + 1)
            report.resent.append(job_id)
    log.warning("job %s: %s", job_id, reason)
    failpoint(SWEEPER_RESENT, job_id=job_id, state=state)
    events.publish(events.job_event(job_id, state, reason, job["attempt"]))


def _locked(conn: sa.Connection, job_id: str, still: sa.ColumnElement[bool]) -> sa.RowMapping | None:
    """The job's row, locked, if it matches ``still`` and nobody else holds it."""
    return conn.execute(sa.select(jobs, _stale_running().label("stale")).where(jobs.c.id == job_id, still)
                        .with_for_update(of=jobs, skip_locked=True)).mappings().first()


def serve(stop: threading.Event) -> None:
    """Sweep every ``sweeper_interval`` until ``stop`` is set."""
    interval = budgets.scaled("sweeper_interval")
    while not stop.is_set():
        try:
            sweep_once()
        except Exception as exc:  # noqa: BLE001 - the next pass tries again
            log.warning("sweeper pass failed: %s: %s", type(exc).__name__, exc)
        stop.wait(interval)


def main() -> int:
    """Run the sweeper until SIGTERM / SIGINT."""
    return run_until_signalled("sweeper", serve)


if __name__ == "__main__":
    sys.exit(main())
