"""Paid-API calls rebuilt from their invoke / completion events, once per history.

Several checkers (billing, timeouts, dead attempts, overlap) look at calls as
intervals; this module pairs the events by ``call_id`` once and caches the
result for the lifetime of the ``History`` object.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from harness.history import vocabulary as v
from harness.history.event import INVOKE, OK, Event
from harness.history.history import History

_cache: "weakref.WeakKeyDictionary[History, tuple[PaidCall, ...]]" = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class PaidCall:
    """One call to the paid API: when it ran, for whom, and how it ended."""

    call_id: str
    job_id: str | None
    attempt: int | None
    step: str | None
    key: str | None
    t_start: float
    t_end: float | None  # None: the call had not ended when the ledger was read
    outcome: str  # ok / fail / info (see harness.history.converters); "" if never completed
    state: str | None
    billed: bool
    status: Any = None
    caller_pid: int | None = None  # the process that made the call (header X-Caller-Pid)
    mode: str | None = None  # the provider's mode for it: normal / hang / fail / slow
    client_timeout: Any = None  # the read timeout its client sent: seconds, "none" (sent without), None (unknown)
    client_gone: bool = False  # the client hung up before an answer was delivered (the ledger's flag)

    @property
    def delivered(self) -> bool:
        """The client received the result."""
        return self.outcome == OK

    @property
    def hung(self) -> bool:
        return self.state == v.LEDGER_HUNG

    def elapsed(self, until: float) -> float:
        """How long the call ran: to its end, or to ``until`` if it never ended."""
        return (self.t_end if self.t_end is not None else until) - self.t_start

    def evidence(self, start: float) -> dict[str, Any]:
        """The call as counterexample fields (times relative to ``start``)."""
        return {"job_id": self.job_id, "attempt": self.attempt, "call_id": self.call_id,
                "step": self.step, "key": self.key, "at": round(self.t_start - start, 6),
                "ended_at": None if self.t_end is None else round(self.t_end - start, 6),
                "state": self.state, "billed": self.billed, "delivered": self.delivered}


def _build(history: History) -> tuple[PaidCall, ...]:
    invokes: dict[str, Event] = {}
    completions: dict[str, Event] = {}
    for event in history.by_source(v.PAIDAPI):
        if event.name != v.CALL:
            continue
        call_id = str(event.data.get("call_id", f"#{event.index}"))
        (invokes if event.type == INVOKE else completions)[call_id] = event
    calls = []
    for call_id in invokes.keys() | completions.keys():
        start, end = invokes.get(call_id), completions.get(call_id)
        some = start or end
        data = end.data if end is not None else some.data
        t_start = start.t if start is not None else end.t - float(end.data.get("latency") or 0.0)
        t_end = None if end is None or end.data.get("open") else end.t
        calls.append(PaidCall(call_id, some.job_id, some.attempt, _opt(data.get("step")),
                              _opt(data.get("key")), t_start, t_end,
                              end.type if end is not None else "", data.get("state"),
                              bool(data.get("billed")), data.get("status"),
                              None if data.get("caller_pid") is None else int(data["caller_pid"]),
                              _opt(data.get("mode")), some.data.get("client_timeout"),
                              bool(data.get("client_gone"))))
    calls.sort(key=lambda c: (c.t_start, c.call_id))
    return tuple(calls)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def paid_calls(history: History) -> tuple[PaidCall, ...]:
    """Every paid call of the history, ordered by start time."""
    calls = _cache.get(history)
    if calls is None:
        calls = _cache[history] = _build(history)
    return calls


def calls_by_job(history: History) -> dict[str, list[PaidCall]]:
    """Paid calls grouped by job (calls without a job are left out)."""
    grouped: dict[str, list[PaidCall]] = {}
    for call in paid_calls(history):
        if call.job_id is not None:
            grouped.setdefault(call.job_id, []).append(call)
    return grouped
