"""Paid-API ledger records and failpoint triggers become history events."""
from __future__ import annotations

import pytest

from harness.history import events_from_ledger, events_from_triggers


def ledger(**overrides):
    record = {"call_id": "c1", "route": "/v1/generate", "job_id": "j1", "step": "summarize",
              "attempt": 2, "key": "j1:summarize", "mode": "normal", "state": "done", "billed": True,
              "status": 200, "client_gone": False, "replay_of": None, "latency": 0.5,
              "t_start": 100.0, "t_end": 100.5, "wall_start": 1e9, "wall_end": 1e9 + 0.5}
    record.update(overrides)
    return record


def test_delivered_call_is_invoke_then_ok():
    invoke, done = events_from_ledger([ledger()])
    assert (invoke.type, invoke.t, invoke.wall, invoke.job_id, invoke.attempt) == ("invoke", 100.0, 1e9, "j1", 2)
    assert invoke.data == {"call_id": "c1", "route": "/v1/generate", "step": "summarize",
                           "key": "j1:summarize", "mode": "normal", "caller_pid": None}
    assert (done.type, done.t, done.source, done.name) == ("ok", 100.5, "paidapi", "call")
    assert done.data["billed"] is True and done.data["delivered"] is True
    assert "open" not in done.data


@pytest.mark.parametrize("overrides, kind, billed", [
    ({"client_gone": True}, "info", True),             # billed although nobody received it
    ({"state": "failed", "billed": False, "status": 500}, "fail", False),
    ({"state": "hung", "billed": False, "t_end": None, "wall_end": None}, "info", False),
    ({"state": "held", "billed": False, "t_end": None}, "info", False),
    ({"state": "replayed", "billed": False, "replay_of": "c0"}, "ok", False),
])
def test_completion_type_follows_the_ledger_state(overrides, kind, billed):
    _, done = events_from_ledger([ledger(**overrides)])
    assert done.type == kind and done.data["billed"] is billed
    assert done.data["replay_of"] == overrides.get("replay_of")


def test_unfinished_call_completes_at_its_start_marked_open():
    _, done = events_from_ledger([ledger(state="in_flight", billed=False, t_end=None, wall_end=None)])
    assert (done.t, done.data["open"], done.type) == (100.0, True, "info")


def test_ledger_events_keep_record_order_and_are_unindexed():
    events = events_from_ledger([ledger(), ledger(call_id="c2", t_start=101.0, t_end=102.0)])
    assert [(e.data["call_id"], e.type) for e in events] == [
        ("c1", "invoke"), ("c1", "ok"), ("c2", "invoke"), ("c2", "ok")]
    assert {e.index for e in events} == {-1}


def test_failpoint_triggers_become_failpoint_events():
    [event] = events_from_triggers([{"name": "submit.after_job_write", "action": "kill", "pid": 42,
                                     "t": 7.0, "wall": 8.0, "hit": 3,
                                     "context": {"job_id": 17, "attempt": 1}}])
    assert (event.source, event.type, event.name, event.t, event.wall) == (
        "failpoint", "ok", "submit.after_job_write", 7.0, 8.0)
    assert (event.job_id, event.attempt) == ("17", 1)
    assert event.data == {"action": "kill", "pid": 42, "context": {"job_id": 17, "attempt": 1}, "hit": 3}


def test_failpoint_without_job_context():
    [event] = events_from_triggers([{"name": "sweep.before_batch", "action": "raise", "pid": 1,
                                     "t": 1.0, "wall": 2.0, "hit": 1, "context": {}}])
    assert event.job_id is None and event.attempt is None


def test_format_attribution_and_money_are_carried_when_the_ledger_has_them():
    invoke, done = events_from_ledger([ledger(format="openai.chat", model="gpt-4o-mini",
                                              caller_pid=42, attributed_by="key", tokens_in=3,
                                              tokens_out=2, cost_usd=0.5)])
    assert (invoke.data["format"], invoke.data["caller_pid"], invoke.data["attributed_by"]) == (
        "openai.chat", 42, "key")
    assert (done.data["tokens_in"], done.data["tokens_out"], done.data["cost_usd"]) == (3, 2, 0.5)
