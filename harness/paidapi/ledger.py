"""The billing ledger: one record per call the fake provider received.

The ledger is the evidence the "no paid call billed twice" invariant reads,
so a record says what a provider's invoice would say (billed or not) and
what the client saw (status, whether it was still there).

``t_start`` / ``t_end`` come from ``time.monotonic()``: CLOCK_MONOTONIC is
system-wide on Linux, so the harness can order them against its own events
even though the server runs in another process.
"""
from __future__ import annotations

import asyncio
import bisect
import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable

log = logging.getLogger("harness.paidapi")

STATES = ("in_flight", "held", "done", "failed", "hung", "replayed")
FINAL_STATES = ("done", "failed", "replayed")
# What `state=` accepts when filtering: a record state, or these two views.
STATE_FILTERS = (*STATES, "billed", "any")


@dataclass
class CallRecord:
    """One call, as the control API returns it."""

    call_id: int
    route: str
    job_id: str | None
    step: str | None
    attempt: int | None
    key: str | None  # the Idempotency-Key header
    mode: str
    state: str = "in_flight"
    billed: bool = False
    status: int | None = None
    client_gone: bool = False
    replay_of: int | None = None
    latency: float = 0.0  # scaled seconds drawn for this call
    format: str = "jobquake"  # the wire format: jobquake, openai.chat, anthropic.messages...
    model: str | None = None
    caller_pid: int | None = None  # header X-Caller-Pid: the process that made the call
    attributed_by: str | None = None  # "headers" | "key" | None (unattributed when job_id is None)
    tokens_in: int = 0
    tokens_out: int = 0  # counted when the generation finishes
    cost_usd: float = 0.0  # what the invoice says: 0 unless billed
    # what the client said: the read timeout it set (seconds, "none", or None when not known), the
    # timeout the app's code asked before jobquake scaled it, the provider URL the code called
    client_timeout: float | str | None = None
    app_timeout: float | str | None = None
    routed_from: str | None = None
    refused: str | None = None  # why the fake could not serve the call (an unknown route or model)
    t_start: float = dataclasses.field(default_factory=time.monotonic)
    t_end: float | None = None
    wall_start: float = dataclasses.field(default_factory=time.time)
    wall_end: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (every field is a scalar: no deep copy needed, which a long run's ledger reads feel)."""
        return {name: getattr(self, name) for name in _FIELD_NAMES}

    def matches(
        self,
        *,
        job_id: str | None = None,
        step: str | None = None,
        attempt: int | None = None,
        route: str | None = None,
        state: str = "any",
        after: int | None = None,
    ) -> bool:
        """True when every given filter holds (``None`` means "any")."""
        return (
            (job_id is None or self.job_id == job_id)
            and (step is None or self.step == step)
            and (attempt is None or self.attempt == attempt)
            and (route is None or self.route == route)
            and (after is None or self.call_id > after)
            and (state == "any" or self.state == state or (state == "billed" and self.billed))
        )


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(CallRecord))


class Ledger:
    """Append-only list of call records with a change signal for long-polling.

    Every change swaps in a fresh ``asyncio.Event`` after setting the old
    one: waiters wake, re-check, and wait on the new one. Unlike a
    Condition this needs no lock, so synchronous code can record changes.
    """

    def __init__(self) -> None:
        self._records: list[CallRecord] = []
        self._next_id = 1  # survives clear(): a call id is never reused
        self._changed = asyncio.Event()

    def open(self, **fields: Any) -> CallRecord:
        """Record a call the provider just accepted."""
        record = CallRecord(call_id=self._next_id, **fields)
        self._next_id += 1
        self._records.append(record)
        log.info(
            "call %d start route=%s job=%s step=%s attempt=%s key=%s mode=%s pid=%s by=%s",
            record.call_id, record.route, record.job_id, record.step,
            record.attempt, record.key, record.mode, record.caller_pid, record.attributed_by,
        )
        self.changed()
        return record

    def refuse(self, *, route: str, status: int, refused: str, **fields: Any) -> CallRecord:
        """Record a call the fake answered with an error at once, serving nothing (an unknown
        route or model): failed, never billed, ``mode`` "refused"."""
        record = self.open(route=route, step=None, attempt=None, key=None, mode="refused", refused=refused,
                           **{"job_id": None, **fields})
        self.finish(record, "failed", status)
        return record

    def update(self, record: CallRecord, **changes: Any) -> None:
        """Change fields of a record that is still in progress."""
        for name, value in changes.items():
            setattr(record, name, value)
        self.changed()

    def finish(self, record: CallRecord, state: str, status: int, *, billed: bool = False) -> None:
        """Close a record: the provider has its answer (the client may be gone)."""
        self.update(
            record, state=state, status=status, billed=billed,
            t_end=time.monotonic(), wall_end=time.time(),
        )
        log.info(
            "call %d end state=%s status=%d billed=%s latency=%.3f client_gone=%s cost=$%.6f",
            record.call_id, state, status, billed, record.latency, record.client_gone,
            record.cost_usd,
        )

    def changed(self) -> None:
        """Wake every long-poll waiter."""
        self._changed.set()
        self._changed = asyncio.Event()

    def records(self, **filters: Any) -> list[CallRecord]:
        """Records matching ``filters`` (see ``CallRecord.matches``), oldest first."""
        after = filters.get("after")
        # records are kept in call id order: ``after`` skips the older ones without looking at them
        start = 0 if after is None else bisect.bisect_right(self._records, after, key=lambda r: r.call_id)
        return [r for r in self._records[start:] if r.matches(**filters)]

    def clear(self) -> None:
        """Forget every record (calls still running keep their own, unlisted)."""
        self._records.clear()
        self.changed()

    async def wait_for(
        self, predicate: Callable[[], CallRecord | None], timeout: float
    ) -> CallRecord | None:
        """Return ``predicate()`` as soon as it is not None, or None after ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (found := predicate()) is None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                return None
        return found


def refusals(records: list[dict[str, Any]]) -> str | None:
    """What the fake refused to serve, in one line for a wait that timed out (None: nothing refused):
    ``3 call(s) answered 404 on /api/chat: the fake paid API does not serve that route``."""
    refused = [r for r in records if r.get("mode") == "refused"]
    if not refused:
        return None
    groups: dict[tuple[Any, Any, Any], int] = {}
    for record in refused:
        key = (record.get("status"), record.get("route"), record.get("refused"))
        groups[key] = groups.get(key, 0) + 1
    parts = []
    for (status, route, why), count in groups.items():
        what = "the fake paid API does not serve that route" if str(why or "").startswith("Invalid URL") else \
            f"{why}: the fake paid API does not know it (add it to [tool.jobquake.paidapi_prices])"
        parts.append(f"{count} call(s) answered {status} on {route}: {what}")
    return "; ".join(parts)
