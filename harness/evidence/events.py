"""The app's evidence as history events: the job state log, heartbeats, attempt deaths, hard-limit kills.

* The state log keeps one row per change of a job's state / reason /
  attempt: each becomes ``ok state`` (``ok deleted`` for a deleted row)
  from source ``job``, with ``log_id``, ``txid``, ``op`` and, where
  tracked, the commit time in ``data``; each attempt the changes left
  behind becomes ``ok attempt_dead`` at the change that declared it.
* Each move of the heartbeat column becomes ``heartbeat ok beat``; each task a
  Celery worker killed at its hard time limit, ``worker ok hard_time_limit``.

Converted events carry ``index = -1``: ``Recorder.extend`` places them.
(The paid API's ledger and failpoint triggers: ``harness.history.converters``.)
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from harness.evidence.derive import AttemptDeath
from harness.evidence.heartbeats import Beat
from harness.evidence.state_log import StateChange
from harness.evidence.worker_logs import HardLimitKill
from harness.history import vocabulary as v
from harness.history.event import OK, UNINDEXED, Event
from harness.history.timing import COMMITTED_AT, COMMITTED_T


def _committed(change: StateChange) -> dict[str, float]:
    if change.committed_at is None or change.committed_t is None:
        return {}
    return {COMMITTED_AT: change.committed_at, COMMITTED_T: change.committed_t}


def events_from_state_log(changes: Iterable[StateChange]) -> list[Event]:
    """One ``job`` event per state-log row, in log order."""
    events = []
    for change in changes:
        data: dict[str, Any] = {"log_id": change.log_id, "txid": change.txid, "op": change.op,
                                **_committed(change)}
        if change.writer_attempt is not None:  # the app (or the instrumentation) said which attempt wrote
            data["writer_attempt"] = change.writer_attempt
        if change.writer is not None:  # which process wrote (its session's application_name)
            data["writer"] = change.writer
        if change.deleted:
            name = v.DELETED
        else:
            name = v.STATE
            data.update(state=change.state, reason=change.reason, attempt=change.attempt)
        events.append(Event(UNINDEXED, change.t, change.wall, v.JOB, OK, name, change.job_id, change.attempt, data))
    return events


def events_from_heartbeats(beats: Iterable[Beat]) -> list[Event]:
    """``heartbeat ok beat`` per logged beat, dated by its statement; ``beat_t`` is the column's value."""
    return [Event(UNINDEXED, b.t, b.wall, v.HEARTBEAT, OK, v.BEAT, b.job_id, b.attempt,
                  {"attempt": b.attempt, "beat_at": b.beat_wall, "beat_t": b.beat_t, "log_id": b.log_id,
                   **({"writer": b.writer} if b.writer is not None else {})})
            for b in beats]


def events_from_hard_limit_kills(kills: Iterable[HardLimitKill],
                                 to_monotonic: Callable[[float], float]) -> list[Event]:
    """``worker ok hard_time_limit`` per kill, dated by its log line (``to_monotonic``: see ``harness.history.clock``)."""
    return [Event(UNINDEXED, to_monotonic(k.wall), k.wall, v.WORKER, OK, v.HARD_LIMIT, None, None,
                  {"worker": k.worker, "task": k.task, "task_id": k.task_id, "limit_s": k.limit_s})
            for k in kills]


def events_from_attempt_deaths(deaths: Iterable[AttemptDeath]) -> list[Event]:
    """``job ok attempt_dead`` per death, dated by the change that declared it (and its commit)."""
    return [Event(UNINDEXED, d.change.t, d.change.wall, v.JOB, OK, v.ATTEMPT_DEAD, d.job_id, d.attempt,
                  {"attempt": d.attempt, "by": d.by, **_committed(d.change)}) for d in deaths]
