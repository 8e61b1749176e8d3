"""How many statements a batch of items cost, table by table, as the database counted them: per-item budgets.

A reference table read once per item instead of once per process, a
duplicate check that searches a whole table for every row, a status
re-read inside a loop: none shows in a job's outcome, and each shows in
the statements the database ran. ``TableWork`` reads ``pg_stat_statements``
(see ``harness.evidence.statements``) before and after a batch and records,
for every table of the app, the statements that read or wrote it, as one
``query ok work`` event per table; ``work_per_item`` divides each by the
batch's items and holds it to the budget the app declares. No scenario
names a table::

    work = TableWork(jq.database_dsn).start()
    job_id = submit(rows)
    wait_for(job_id)
    work.record(jq.history, items=len(rows), job_id=job_id)

Work that goes on whatever the batch does (a sweeper's or a relay's poll, a
dashboard catching up) is no item's: after the batch ``record`` watches the
statements for ``window`` seconds more and takes from each statement it
sees then its rate over the batch's span. A statement the batch alone ran
keeps its whole count.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError
from harness.evidence.statements import Statement, read_statements, tables_of, user_tables
from harness.history import vocabulary as v

__all__ = ["DEFAULT_WINDOW", "TableCount", "TableWork"]

HARNESS_TABLES = "jobquake_"  # the harness's own tables (state log, heartbeat log): no app work
DEFAULT_WINDOW = 2.0  # seconds of watching after the batch, to tell background statements apart


@dataclass(frozen=True)
class TableCount:
    """The statements one table took in a batch: all of them, and the background's share taken out."""

    table: str
    queries: float
    background: float


def _calls(before: dict[int, Statement], after: dict[int, Statement]) -> dict[int, int]:
    return {qid: s.calls - (before[qid].calls if qid in before else 0) for qid, s in after.items()}


class TableWork:
    """The statements of every table between ``start()`` and ``record()``."""

    def __init__(self, dsn: str, *, window: float = DEFAULT_WINDOW):
        self.dsn = dsn
        self.window = window
        self.before: dict[int, Statement] | None = None
        self.started = 0.0

    def start(self) -> "TableWork":
        """Take the counts before the batch; returns self."""
        self.before = read_statements(self.dsn)
        self.started = time.monotonic()
        return self

    def counts(self) -> list[TableCount]:
        """The batch's statements per table, background taken out; watches ``window`` seconds after it."""
        if self.before is None:
            raise HarnessError("TableWork.counts() before start()")
        after, ended = read_statements(self.dsn), time.monotonic()
        batch = _calls(self.before, after)
        watched = self._watch(after)  # the statements that go on once the batch is over
        span = ended - self.started
        tables = {t for t in user_tables(self.dsn) if not t.startswith(HARNESS_TABLES)}
        totals: dict[str, list[float]] = {t: [0.0, 0.0] for t in tables}
        for qid, calls in batch.items():
            if calls <= 0:
                continue
            background = min(calls, watched.get(qid, 0) / self.window * span)
            for table in tables_of(after[qid].query, tables):
                totals[table][0] += calls - background
                totals[table][1] += background
        return [TableCount(t, round(q, 2), round(b, 2)) for t, (q, b) in sorted(totals.items())]

    def _watch(self, after: dict[int, Statement]) -> dict[int, int]:
        """The calls of each statement during ``window`` seconds from ``after``: a rate, measured, so the
        window's length is the measurement, not a wait for anything to settle."""
        time.sleep(self.window)
        return _calls(after, read_statements(self.dsn))

    def record(self, history: Any, *, items: int, job_id: str | None = None) -> list[TableCount]:
        """``counts()``, recorded as one ``query ok work`` event per table; the counts."""
        counts = self.counts()
        for count in counts:
            history.record(v.QUERY, "ok", v.WORK, job_id=job_id,
                           data={"table": count.table, "queries": count.queries, "items": items,
                                 "background": count.background})
        return counts
