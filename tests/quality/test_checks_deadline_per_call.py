"""deadline_honoured without a deadline option: each call's own timeout (the ledger's client_timeout)."""
from __future__ import annotations

from harness.checks.deadline import deadline_honoured
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History
from harness.history.snapshot import JobRow, Snapshot

TERMINAL = ("done", "failed")


def _history(call_timeout, end_at: float | None, hung: bool = True, soft: float | None = None) -> History:
    events = []
    if soft is not None:
        events.append(Event(0, 0.5, 0.5, v.INSTRUMENT, "invoke", "task", "j1", 1, {"soft_time_limit": soft}))
    data = {"call_id": 1, "mode": "hang" if hung else "normal", "client_timeout": call_timeout}
    events.append(Event(1, 1.0, 1.0, v.PAIDAPI, "invoke", v.CALL, "j1", 1, data))
    events.append(Event(2, 20.0, 20.0, v.PAIDAPI, "fail", v.CALL, "j1", 1,
                        {**data, "state": "failed" if hung else "done", "billed": False}))
    if end_at is not None:
        events.append(Event(3, end_at, end_at, v.JOB, "ok", v.STATE, "j1", 1,
                            {"state": "failed", "reason": "timeout: no answer"}))
    return History(sorted(events, key=lambda e: e.t))


def _snapshot() -> Snapshot:
    return Snapshot(jobs=[JobRow("j1", "failed", "timeout: no answer", 1)], terminal_states=TERMINAL)


def test_a_job_ending_at_its_calls_own_timeout_is_valid_and_late_is_not():
    assert deadline_honoured(_history(2.0, 3.1), _snapshot(), slack_ratio=0.5).valid is True
    late = deadline_honoured(_history(2.0, 9.0), _snapshot(), slack_ratio=0.5)
    assert late.valid is False and "late for a 2s deadline" in late.message


def test_a_call_sent_without_a_timeout_is_a_violation_once_the_provider_never_answered():
    result = deadline_honoured(_history("none", 4.0, soft=3.0), _snapshot(), slack_ratio=0.5)
    assert result.valid is False and "sent without a timeout" in result.message


def test_a_task_soft_limit_shorter_than_the_calls_timeout_is_the_deadline_that_ends_the_job():
    # the call's 60 s timeout is production-long; the task's 3 s soft limit (started 0.5 s before) ends it
    assert deadline_honoured(_history(60.0, 3.6, soft=3.0), _snapshot(), slack_ratio=0.5).valid is True


def test_calls_whose_timeout_is_unknown_leave_the_verdict_unknown():
    assert deadline_honoured(_history(None, 3.0), _snapshot()).valid == "unknown"
