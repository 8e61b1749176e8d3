"""One attempt at a job: its fencing token, its cancel flag, and the heartbeat that proves it lives.

Every claim of a job increments ``jobs.attempt``; the new number is the
attempt's token. Each write the attempt makes, and each paid call, is
checked against the job row (``... WHERE attempt = :mine AND state =
'running'``) inside the same transaction, so once an attempt is declared
dead (the sweeper re-sent the job, another worker took over a stale
heartbeat, the SQS cap released it) its late writes change nothing. The
cancel flag is the cooperative half: work that was abandoned while it
waited notices the flag at its next check and stops.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from types import TracebackType

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from refapp import budgets
from refapp.db import NOW, engine, jobs
from refapp.failpoints import HEARTBEAT_WRITTEN, failpoint
from refapp.mutants import mutant

log = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED, NEEDS_HUMAN = "queued", "running", "done", "failed", "needs_human"
TERMINAL = (DONE, FAILED, NEEDS_HUMAN)


class AttemptAbandoned(Exception):
    """This attempt no longer owns its job: it was declared dead, or told to stop."""


class JobCancelled(Exception):
    """The user asked to cancel the job."""


@dataclass
class Attempt:
    """The right to work on one job, valid while ``jobs.attempt`` still equals ``token``."""

    job_id: str
    token: int
    route: str
    cancel: threading.Event = field(default_factory=threading.Event)

    def owns(self) -> sa.ColumnElement[bool]:
        """SQL condition: the job row still belongs to this attempt."""
        return sa.and_(jobs.c.id == self.job_id, jobs.c.attempt == self.token, jobs.c.state == RUNNING)

    def unfenced_fallback(self, also: str | None = None) -> sa.ColumnElement[bool] | None:
        """The condition a statement the fence refused is retried with (None: it is not).

        Only a wrong shape retries: mutant abandoned-work-writes, or ``also``
        (a mutant of one write path). Asked after a refusal, never before.
        """
        if mutant("abandoned-work-writes") or (also is not None and mutant(also)):
            return jobs.c.id == self.job_id  # the wrong shape: any attempt may write
        return None

    def update_owned(self, conn: Connection, *, also: str | None = None, **values: object) -> int:
        """Update the job row while this attempt owns it (``also``: see ``unfenced_fallback``); rows changed."""
        moved = conn.execute(sa.update(jobs).where(self.owns()).values(**values)).rowcount
        if not moved and (unfenced := self.unfenced_fallback(also)) is not None:
            moved = conn.execute(sa.update(jobs).where(unfenced).values(**values)).rowcount
        return moved

    def writes_as(self, conn: Connection) -> None:
        """Open this attempt's part of a transaction that locks or writes the job's row.

        For this transaction only: say which attempt makes its writes (read
        by audit triggers), and let the database end the transaction once it
        sits idle for ``db_idle_in_transaction``. Postgres cannot tell a
        frozen client (a long GC pause, a stopped VM) from a slow one, and a
        frozen attempt's row lock would hold up the sweeper (it skips locked
        rows) and the next claim (it waits) until the process woke.
        """
        idle_ms = str(max(1, round(budgets.scaled("db_idle_in_transaction") * 1000)))
        conn.execute(sa.select(sa.func.set_config("jobquake.attempt", str(self.token), True),
                               sa.func.set_config("idle_in_transaction_session_timeout", idle_ms, True)))

    def ensure_alive(self) -> None:
        """Raise AttemptAbandoned once somebody told this attempt to stop."""
        if self.cancel.is_set() and not mutant("abandoned-work-writes"):
            raise AttemptAbandoned(f"attempt {self.token} of job {self.job_id} was told to stop")

    def fence(self, conn: Connection) -> None:
        """Prove, inside ``conn``'s transaction, that this attempt still owns the job.

        The row stays share-locked until the transaction ends, so nobody can
        declare the attempt dead between this check and the writes that
        follow it. Raises JobCancelled when the user asked to cancel. It does
        not count as a heartbeat: liveness is the heartbeat's job alone.
        """
        self.ensure_alive()
        self.writes_as(conn)
        row = conn.execute(
            sa.select(jobs.c.cancel_requested).where(self.owns()).with_for_update(read=True)
        ).first()
        if row is None and (unfenced := self.unfenced_fallback()) is not None:
            row = conn.execute(sa.select(jobs.c.cancel_requested).where(unfenced).with_for_update(read=True)).first()
        if row is None:
            self.cancel.set()
            raise AttemptAbandoned(f"attempt {self.token} of job {self.job_id} no longer owns it")
        if row.cancel_requested:
            raise JobCancelled(f"job {self.job_id} was cancelled")

    def beat(self) -> bool:
        """Record that this attempt is alive; False (and the cancel flag set) once it is fenced out."""
        with engine().begin() as conn:
            self.writes_as(conn)
            moved = self.update_owned(conn, heartbeat_at=NOW)
            failpoint(HEARTBEAT_WRITTEN, **self.context())  # the job's row is locked until COMMIT
        if not moved:
            self.cancel.set()
            return False
        return True

    def context(self, **extra: object) -> dict[str, object]:
        """Failpoint context for this attempt."""
        return {"job_id": self.job_id, "attempt": self.token, "route": self.route, **extra}


class Heartbeat:
    """A thread that beats for an attempt while the ``with`` block runs (Celery path).

    It stops on its own when the attempt is fenced out, and it dies with the
    process: a killed worker stops beating, which is how the sweeper knows.
    """

    def __init__(self, attempt: Attempt, interval: float | None = None):
        self.attempt = attempt
        self.interval = budgets.scaled("heartbeat_interval") if interval is None else interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"heartbeat {attempt.job_id}#{attempt.token}")

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                if not self.attempt.beat():
                    log.warning("job %s: attempt %s was declared dead; stopping it",
                                self.attempt.job_id, self.attempt.token)
                    return
            except sa.exc.SQLAlchemyError as exc:  # a missed beat is survivable; six are not
                log.warning("job %s: heartbeat failed: %s", self.attempt.job_id, exc)
                if mutant("heartbeat-dies-on-db-error"):
                    return  # the wrong shape: one database blip and the attempt looks dead for good

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(timeout=max(1.0, self.interval * 2))
