"""Turn records kept by other components into history events.

* The fake paid API keeps a billing ledger, one record per call::

    {"call_id", "route", "job_id", "step", "attempt", "key", "mode",
     "state": "in_flight"|"held"|"done"|"failed"|"hung"|"replayed",
     "billed", "status", "client_gone", "replay_of", "latency",
     "format", "model", "caller_pid", "attributed_by",
     "tokens_in", "tokens_out", "cost_usd",
     "t_start", "t_end", "wall_start", "wall_end"}

  Each record becomes an ``invoke call`` at ``t_start`` and a completion:
  ``ok`` when the result was delivered (done / replayed, client still there),
  ``fail`` when the provider answered with an error, ``info`` when the client
  had gone or the call has not finished (hung, held, in flight). ``billed``
  is carried on the completion whatever its type: a provider bills a call it
  finished generating even if nobody received it. A call that has not ended
  gets its completion at ``t_start`` with ``data["open"] = True``.

* Failpoints keep one trigger record per hit::

    {"name", "context", "action", "pid", "t", "wall", "hit"}

  Each becomes ``ok <name>`` from source ``failpoint``; ``job_id`` and
  ``attempt`` are taken from the context when the app passed them.

* The state log (``harness.evidence``) keeps one row per change of a job's
  state / reason / attempt: each becomes ``ok state`` (``ok deleted`` for a
  deleted row) from source ``job``, with ``log_id``, ``txid``, ``op`` and,
  where tracked, the commit time in ``data``; each attempt the changes left
  behind becomes ``ok attempt_dead`` at the change that declared it.

Converted events carry ``index = -1``: ``Recorder.extend`` places them.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from harness.evidence import AttemptDeath, Beat, HardLimitKill, StateChange
from harness.history import vocabulary as v
from harness.history.event import FAIL, INFO, INVOKE, OK, UNINDEXED, Event
from harness.history.timing import COMMITTED_AT, COMMITTED_T

_CALL_KEYS = ("call_id", "route", "step", "key", "mode", "caller_pid")
_OUTCOME_KEYS = ("state", "billed", "status", "client_gone", "replay_of", "latency")
# Carried when the ledger has them (older ledgers and hand-made records may not).
_OPTIONAL_CALL_KEYS = ("format", "model", "caller_pid", "attributed_by")
_OPTIONAL_OUTCOME_KEYS = ("tokens_in", "tokens_out", "cost_usd")


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def completion_type(record: Mapping[str, Any]) -> str:
    """``ok`` / ``fail`` / ``info`` for one ledger record (see the module docstring)."""
    state = record.get("state")
    if record.get("client_gone") or state in v.LEDGER_UNKNOWN_STATES:
        return INFO
    if state in v.LEDGER_DELIVERED_STATES:
        return OK
    if state in v.LEDGER_FAILED_STATES:
        return FAIL
    return INFO


def call_events(record: Mapping[str, Any]) -> tuple[Event, Event]:
    """The invoke and the completion of one paid-API call."""
    job_id, attempt = _opt_str(record.get("job_id")), _opt_int(record.get("attempt"))
    call = {key: record.get(key) for key in _CALL_KEYS}
    call.update({key: record[key] for key in _OPTIONAL_CALL_KEYS if key in record})
    t_start = float(record["t_start"])
    wall_start = float(record.get("wall_start") or 0.0)
    invoke = Event(UNINDEXED, t_start, wall_start, v.PAIDAPI, INVOKE, v.CALL, job_id, attempt, call)
    kind = completion_type(record)
    outcome = {**call, **{key: record.get(key) for key in _OUTCOME_KEYS}}
    outcome.update({key: record[key] for key in _OPTIONAL_OUTCOME_KEYS if key in record})
    outcome["billed"] = bool(outcome.get("billed"))
    outcome["delivered"] = kind == OK
    ended = record.get("t_end") is not None
    if not ended:
        outcome["open"] = True
    t_end = float(record["t_end"]) if ended else t_start
    wall_end = float(record.get("wall_end") or wall_start) if ended else wall_start
    done = Event(UNINDEXED, t_end, wall_end, v.PAIDAPI, kind, v.CALL, job_id, attempt, outcome)
    return invoke, done


def events_from_ledger(records: Iterable[Mapping[str, Any]]) -> list[Event]:
    """Two events per ledger record, in record order (invoke before its completion)."""
    events: list[Event] = []
    for record in records:
        events.extend(call_events(record))
    return events


def events_from_triggers(records: Iterable[Mapping[str, Any]]) -> list[Event]:
    """One ``failpoint`` event per trigger record."""
    events = []
    for record in records:
        context = dict(record.get("context") or {})
        data = {"action": record.get("action"), "pid": record.get("pid"),
                "context": context, "hit": record.get("hit")}
        events.append(Event(UNINDEXED, float(record["t"]), float(record.get("wall") or 0.0),
                            v.FAILPOINT, OK, str(record["name"]),
                            _opt_str(context.get("job_id")), _opt_int(context.get("attempt")), data))
    return events


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
    """``worker ok hard_time_limit`` per kill, dated by its log line (``to_monotonic``: see ``harness.evidence.clock``)."""
    return [Event(UNINDEXED, to_monotonic(k.wall), k.wall, v.WORKER, OK, v.HARD_LIMIT, None, None,
                  {"worker": k.worker, "task": k.task, "task_id": k.task_id, "limit_s": k.limit_s})
            for k in kills]


def events_from_attempt_deaths(deaths: Iterable[AttemptDeath]) -> list[Event]:
    """``job ok attempt_dead`` per death, dated by the change that declared it (and its commit)."""
    return [Event(UNINDEXED, d.change.t, d.change.wall, v.JOB, OK, v.ATTEMPT_DEAD, d.job_id, d.attempt,
                  {"attempt": d.attempt, "by": d.by, **_committed(d.change)}) for d in deaths]
