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

The app's own evidence (its job state log, heartbeats, attempt deaths,
hard-limit kills) is turned into events next to its readers, by
``harness.evidence.events``.

Converted events carry ``index = -1``: ``Recorder.extend`` places them.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from harness.history import vocabulary as v
from harness.history.event import FAIL, INFO, INVOKE, OK, UNINDEXED, Event

__all__ = ["call_events", "completion_type", "events_from_ledger", "events_from_triggers"]

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
