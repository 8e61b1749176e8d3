"""Invariant: what a status stream tells agrees with the database, over time.

A person watching one job, or a dashboard watching every job, is told its
states as server-sent events. The stream must tell them in the order the
database had them, never a state the database did not (yet) have, and in
the end the final one, also when an event was lost on the way (Redis away,
a publisher killed between its commit and its publish) or the stream
reconnected. A stream that ends a job early ("no longer running" while the
job waits for its next attempt), replays an older attempt's state after a
newer one, or waits for a change that already happened leaves a screen that
lies until someone refreshes it.

**Evidence.** The harness's stream readers (``harness.streams``): each
``event status`` they were told (``stream``: which reader), when each
stream opened and closed, and, before the verdict, whether each was still
connected once it had ``CATCH_UP`` seconds to tell what the database says
(``harness read status_streams``); the job state log (each change's
commit time) and the final snapshot.

**Rules**, per stream and job:

1. every state told was in the state log by then (committed at most
   ``TOLERANCE`` s after it was told);
2. told states follow the log's order: a state whose last entry in the log
   is older than a state told before it is a replay;
3. a stream still connected at the end (or a job's stream that ended after
   its terminal state) told the job's final state last; the all-jobs stream
   answers for every job that changed while it listened;
4. a job's stream the server ended before its job's terminal state ended
   early, unless a fault stopped, froze or killed an app process meanwhile.

``unknown`` when no stream was read or none told anything (config names no
``status_stream`` and the scenario opened none, or no job changed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.checks.landed import Window, windows
from harness.checks.needs import Missing, Need, last_read
from harness.checks.result import Result, invalid_result, valid_result
from harness.checks.runner import invariant
from harness.history.snapshot import Snapshot
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History
from harness.history.timing import COMMITTED_T

NAME = "streams_agree_with_db"
TOLERANCE = 0.25  # seconds: a told state may precede its commit's timestamp by clock-reading noise only
APP_PROCESS_FAULTS = ("stop_service", "pause_service", "kill_worker")


@dataclass
class StreamLog:
    """What one stream reader saw: when it opened, what it was told, how it closed."""

    name: str
    job_id: str | None = None
    opened: float | None = None
    told: list[Event] = field(default_factory=list)
    closes: list[Event] = field(default_factory=list)
    connected_at_end: bool = False


def stream_logs(history: History) -> dict[str, StreamLog]:
    """Every stream reader's log, by name."""
    logs: dict[str, StreamLog] = {}
    for event in history.by_source(v.EVENT):
        name = event.data.get("stream")
        if name is None or event.name not in (v.STREAM_OPENED, v.STATUS, v.STREAM_CLOSED):
            continue
        log = logs.setdefault(str(name), StreamLog(str(name)))
        if event.name == v.STREAM_OPENED:
            log.job_id = event.data.get("job_id")
            log.opened = event.t if log.opened is None else log.opened
        elif event.name == v.STATUS:
            log.told.append(event)
        else:
            log.closes.append(event)
    for entry in (last_read(history, v.STREAMS_SOURCE) or {}).get("streams") or []:
        if str(entry.get("stream")) in logs:
            logs[str(entry["stream"])].connected_at_end = bool(entry.get("connected"))
    return logs


def _told(history: History, snapshot: Snapshot | None) -> Missing | None:
    logs = stream_logs(history)
    if any(log.told for log in logs.values()):
        return None
    if not logs:
        return Missing("no status stream was read (config names no status_stream, and the scenario opened none)")
    return Missing(f"{len(logs)} status stream(s) read, none told anything: no job changed while they listened")


STREAMS = Need("status_streams", "status streams read during the run, which told at least one state", _told)


# -- the state log, as positions a told state can be placed at ----------------------------------
def _log(history: History) -> dict[str, list[Event]]:
    entries: dict[str, list[Event]] = {}
    for event in history.by_source(v.JOB, name=v.STATE):
        if event.job_id is not None and event.data.get("state") is not None:
            entries.setdefault(event.job_id, []).append(event)
    for job_entries in entries.values():
        job_entries.sort(key=lambda e: (e.data.get("log_id") is None, e.data.get("log_id") or 0, e.t))
    return entries


def _position(told: Event, entries: list[Event]) -> int | None:
    """The last log entry the told state can be (same state and attempt, committed by then); None if none."""
    state, attempt = told.data.get("state"), told.attempt
    found = None
    for index, entry in enumerate(entries):
        same = entry.data.get("state") == state and (attempt is None or entry.data.get("attempt") == attempt)
        if same and float(entry.data.get(COMMITTED_T) or entry.t) <= told.t + TOLERANCE:
            found = index
    return found


def _what(event: Event) -> str:
    return f"{event.data.get('state')!r}" + (f" (attempt {event.attempt})" if event.attempt is not None else "")


# -- the rules ----------------------------------------------------------------------------------
def _order_violations(history: History, log: StreamLog, entries: dict[str, list[Event]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    furthest: dict[str, tuple[int, Event]] = {}
    for told in log.told:
        job_entries = entries.get(str(told.job_id))
        if job_entries is None:
            continue  # a job of no state log (another test's, deleted): not this stream's to answer for
        base = {"stream": log.name, "job_id": told.job_id, "at": history.relative(told.t), "told": _what(told)}
        position = _position(told, job_entries)
        if position is None:
            found.append({**base, "why": f"told {_what(told)}, which the database did not have (yet)"})
            continue
        before = furthest.get(str(told.job_id))
        if before is not None and position < before[0]:
            found.append({**base, "why": f"told {_what(told)} after {_what(before[1])}, which the database "
                                         f"had later: the stream went backwards"})
            continue
        furthest[str(told.job_id)] = (position, told)
    return found


def _covered(log: StreamLog, entries: dict[str, list[Event]]) -> set[str]:
    if log.job_id is not None:
        return {str(log.job_id)}
    opened = log.opened if log.opened is not None else float("inf")
    return {job for job, job_entries in entries.items() if job_entries[-1].t >= opened}


def _final_violations(history: History, log: StreamLog, entries: dict[str, list[Event]],
                      snapshot: Snapshot) -> list[dict[str, Any]]:
    ended_told_terminal = log.job_id is not None and any(c.data.get("told_terminal") for c in log.closes)
    if not (log.connected_at_end or ended_told_terminal):
        return []  # cut off at the end (its server down): what it would have told is unknown
    last = {}
    for told in log.told:
        last[str(told.job_id)] = told
    found = []
    for job in sorted(_covered(log, entries)):
        row = snapshot.job(job)
        if row is None:
            continue
        told = last.get(job)
        if told is not None and told.data.get("state") == row.state and told.attempt in (None, row.attempt):
            continue
        said = "nothing" if told is None else _what(told)
        found.append({"stream": log.name, "job_id": job, "at": None if told is None else history.relative(told.t),
                      "final": row.state, "told_last": said,
                      "why": f"never told the job's final state {row.state!r} (attempt {row.attempt}); "
                             f"the last it told was {said}"})
    return found


def _excused(close: Event, faults: list[Window]) -> bool:
    """A fault on an app process (its server restarted, frozen, killed) was in force when the stream ended."""
    return any(w.fault in APP_PROCESS_FAULTS and w.details.get("role") != "infrastructure"
               and w.invoked_at - TOLERANCE <= close.t <= (w.healed_at if w.healed_at is not None else float("inf"))
               + TOLERANCE for w in faults)


def _early_ends(history: History, log: StreamLog, faults: list[Window], snapshot: Snapshot) -> list[dict[str, Any]]:
    if log.job_id is None:
        return []
    found = []
    for close in log.closes:
        if close.data.get("by") != "server" or close.data.get("told_terminal") or _excused(close, faults):
            continue
        told = [t for t in log.told if t.t <= close.t]
        said = _what(told[-1]) if told else "nothing"
        row = snapshot.job(str(log.job_id))
        found.append({"stream": log.name, "job_id": log.job_id, "at": history.relative(close.t),
                      "told_last": said, "final": None if row is None else row.state,
                      "why": f"the server ended the job's stream at {said}, before the job's end"})
    return found


@invariant(NAME, needs=(STREAMS,))
def streams_agree_with_db(history: History, snapshot: Snapshot | None) -> Result:
    """Each status stream told states in the database's order, none it did not have, and the final one."""
    logs = stream_logs(history)
    entries, faults = _log(history), windows(history)
    violations: list[dict[str, Any]] = []
    for log in logs.values():
        violations += _order_violations(history, log, entries)
        if snapshot is not None:
            violations += _final_violations(history, log, entries, snapshot)
            violations += _early_ends(history, log, faults, snapshot)
    if violations:
        violations.sort(key=lambda f: (f["at"] is None, f["at"] or 0.0))
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} disagreement(s) between status streams and the database; "
                              f"first: stream {f['stream']}, job {f['job_id']}: {f['why']}", violations)
    told = sum(len(log.told) for log in logs.values())
    jobs = {str(t.job_id) for log in logs.values() for t in log.told}
    return valid_result(NAME, f"{len(logs)} stream(s) told {told} state(s) of {len(jobs)} job(s) in the database's "
                        f"order, each ending with the job's final state", streams=len(logs), told=told,
                        jobs=len(jobs))
