"""Write histories by hand: for checker tests, examples and custom checkers.

Times are seconds from the start of the run (the builder adds a base so
they look like monotonic readings); a history whose first event is at 0
reports relative times equal to the ones written here::

    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.state("j1", 0.1, "running", attempt=1)
    b.call("j1", 0.2, 0.9, attempt=1, step="summarize", key="j1:summarize")
    b.state("j1", 1.0, "done", attempt=1)
    b.row("j1", "done", attempt=1)
    history, snapshot = b.history(), b.snapshot()

Paid calls go through ``events_from_ledger`` and failpoints through
``events_from_triggers``, so hand-made histories look exactly like recorded ones.
"""
from __future__ import annotations

from typing import Any, Iterable

from harness.history import vocabulary as v
from harness.history.converters import events_from_ledger, events_from_triggers
from harness.history.event import FAIL, INVOKE, OK, Event
from harness.history.history import History
from harness.history.snapshot import JobRow, Snapshot

__all__ = ["BASE_T", "HistoryBuilder", "WALL_OFFSET"]

BASE_T = 1000.0
WALL_OFFSET = 1_700_000_000.0


class HistoryBuilder:
    """Accumulates events (and snapshot rows) in the order they are written."""

    def __init__(self, base: float = BASE_T):
        self.base = base
        self._events: list[Event] = []
        self._rows: list[JobRow] = []
        self._calls = 0

    def _wall(self, t: float) -> float:
        return WALL_OFFSET + t

    def event(self, source: str, type: str, name: str, t: float, job_id: str | None = None,
              attempt: int | None = None, /, **data: Any) -> Event:
        """Any event, at ``t`` seconds into the run (positional fields, then data keywords)."""
        event = Event(len(self._events), self.base + t, self._wall(t), source, type, name,
                      job_id, attempt, data)
        self._events.append(event)
        return event

    def _extend(self, events: Iterable[Event]) -> None:
        for event in events:
            self._events.append(event.with_index(len(self._events)))

    def submit(self, job_id: str | None, t: float, status: int = 202, answered: bool = True) -> None:
        """A submission: invoke, then ok (2xx) / fail (other) / info (``answered=False``)."""
        self.event(v.SUBMIT, INVOKE, v.SUBMIT, t, project="demo", file="input.wav")
        if not answered:
            self.event(v.SUBMIT, "info", v.SUBMIT, t + 0.001)
        elif 200 <= status < 300:
            self.event(v.SUBMIT, OK, v.SUBMIT, t + 0.001, job_id, status=status, job_id=job_id)
        else:
            self.event(v.SUBMIT, FAIL, v.SUBMIT, t + 0.001, status=status)

    def state(self, job_id: str, t: float, state: str, attempt: int | None = None,
              reason: str | None = None) -> None:
        self.event(v.JOB, OK, v.STATE, t, job_id, attempt, state=state, reason=reason, attempt=attempt)

    def call(self, job_id: str | None, t: float, end: float | None, attempt: int | None = 1,
             step: str | None = "generate", key: str | None = None, state: str = "done",
             billed: bool | None = None, client_gone: bool = False, status: int | None = 200,
             replay_of: str | None = None, cost_usd: float = 0.0, caller_pid: int | None = None,
             mode: str = "normal", client_timeout: Any = None) -> str:
        """A paid call from ``t`` to ``end`` (None: still running); returns its call id. ``mode``: the
        provider's (``hang``: it never answered); ``client_timeout``: the read timeout its client sent."""
        self._calls += 1
        call_id = f"call-{self._calls}"
        record = {"call_id": call_id, "route": "/v1/generate", "job_id": job_id, "step": step,
                  "attempt": attempt, "key": key, "mode": mode, "state": state, "client_timeout": client_timeout,
                  "billed": state == "done" if billed is None else billed, "status": status,
                  "client_gone": client_gone, "replay_of": replay_of,
                  "latency": None if end is None else end - t, "cost_usd": cost_usd,
                  "t_start": self.base + t, "t_end": None if end is None else self.base + end,
                  "wall_start": self._wall(t), "wall_end": None if end is None else self._wall(end),
                  "caller_pid": caller_pid}
        self._extend(events_from_ledger([record]))
        return call_id

    def dead(self, job_id: str, t: float, attempt: int, by: str = "sweeper") -> None:
        self.event(v.JOB, OK, v.ATTEMPT_DEAD, t, job_id, attempt, attempt=attempt, by=by)

    def write(self, job_id: str, t: float, attempt: int, refused: bool = False, table: str = "results") -> None:
        self.event(v.WRITE, FAIL if refused else OK, v.WRITE, t, job_id, attempt,
                   attempt=attempt, table=table, refused=refused)

    def status(self, job_id: str, t: float, state: str) -> None:
        self.event(v.EVENT, OK, v.STATUS, t, job_id, state=state)

    def failpoint(self, name: str, t: float, action: str = "raise", **context: Any) -> None:
        self._extend(events_from_triggers([{"name": name, "context": context, "action": action,
                                            "pid": 1, "t": self.base + t, "wall": self._wall(t), "hit": 1}]))

    def fault(self, fault: str, inject: float, heal: float | None, details: dict[str, Any] | None = None,
              **params: Any) -> None:
        """A fault window: invoke/ok inject at ``inject`` (``details`` on the ok), invoke/ok heal at ``heal``."""
        for name, t in ((v.INJECT, inject), (v.HEAL, heal)):
            if t is not None:
                for type_ in (INVOKE, OK):
                    extra = details if (name, type_) == (v.INJECT, OK) and details else {}
                    self.event(v.FAULT, type_, name, t, fault=fault, params=params, **extra)

    def sweep(self, t: float, eligible: list[str], processed: list[str], failed: list[str],
              summary: dict[str, int] | None = None, state: str = "done", run_id: str = "sweep-1") -> None:
        summary = summary if summary is not None else {"processed": len(processed), "failed": len(failed)}
        self.event(v.SWEEP, OK, v.SWEEP, t, run_id=run_id, eligible=eligible, processed=processed,
                   failed=failed, summary=summary, state=state)

    def budget(self, t: float, kind: str, task: str, soft: float | None, hard: float | None) -> None:
        self.event(v.BUDGET, OK, kind, t, task=task, soft=soft, hard=hard)

    def scan(self, t: float, table: str, scans: int, items: int) -> None:
        self.event(v.QUERY, OK, v.SCAN, t, table=table, scans=scans, items=items)

    def row(self, job_id: str, state: str, attempt: int | None = 1, reason: str | None = None,
            updated: float = 0.0, heartbeat: float | None = None, created: float = 0.0) -> None:
        """A row of the final snapshot (times in seconds into the run)."""
        self._rows.append(JobRow(job_id, state, reason, attempt,
                                 None if heartbeat is None else self._wall(heartbeat),
                                 self._wall(updated), self._wall(created)))

    def history(self) -> History:
        return History(self._events)

    def snapshot(self, taken_at: float | None = None, **kwargs: Any) -> Snapshot:
        """The rows written so far, taken at ``taken_at`` s (default: one second after the last event)."""
        if taken_at is None:
            taken_at = max((e.t - self.base for e in self._events), default=0.0) + 1.0
        return Snapshot(jobs=tuple(self._rows), taken_at_wall=self._wall(taken_at), **kwargs)
