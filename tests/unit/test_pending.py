"""Pending-work readers and the settler, with the sources faked; the leak rule on built histories."""
from __future__ import annotations

import json

from harness.checks.dead_attempts import no_effect_from_dead_attempt
from harness.checks.done_steps import no_paid_call_for_done_step
from harness.evidence import StateChange, attempt_deaths
from harness.evidence.events import events_from_attempt_deaths, events_from_state_log
from harness.history import History
from harness.history.event import Event
from harness.leaks import LEAKED_TO_LATER, created_jobs, leaked_to_later, no_work_from_earlier_tests, without_leaks
from harness.pending import PendingWork, Settler
from harness.pending.broker import describe_message, queue_keys
from harness.pending.calls import calls_in_flight
from harness.pending.sqs import read_sqs
from harness.pending.verdict import settle_result


def test_the_settler_waits_for_two_quiet_reads_in_a_row():
    reads = iter([[PendingWork("queued message(s)", "redis queue 'q'")], [], [PendingWork("x", "y")], [], []])
    polls = []

    def reader():
        polls.append(1)
        return next(reads, [])

    outcome = Settler({"broker": reader}).wait(timeout=5, interval=0.001)
    assert outcome.settled and len(polls) == 5  # busy, quiet, busy, quiet, quiet


def test_a_timeout_lists_what_where_and_since_when_first_seen():
    clock = iter(range(100, 200))
    settler = Settler({"broker": lambda: [PendingWork("queued message(s)", "redis queue 'q'", 2,
                                                      detail="tiny.work id=1")]}, clock=lambda: next(clock))
    outcome = settler.wait(timeout=0.05, interval=0.01)
    assert not outcome.settled
    [item] = outcome.pending
    assert item.since == 100  # first seen, kept across reads
    result = settle_result(outcome)
    assert result.valid is False
    assert "2 queued message(s) in redis queue 'q'" in result.message and "tiny.work id=1" in result.message


def test_an_unreadable_source_is_pending_and_parked_work_is_not_waited_for():
    def broken():
        raise ConnectionError("refused")

    outcome = Settler({"redis": broken}).wait(timeout=0.05, interval=0.01)
    assert not outcome.settled and outcome.pending[0].kind == "unreadable source"
    assert "refused" in outcome.pending[0].detail
    parked = PendingWork("visible message(s)", "sqs dead-letter queue 'dlq'", blocks=False)
    outcome = Settler({"sqs": lambda: [parked]}).wait(timeout=1, interval=0.001)
    assert outcome.settled and [p.where for p in outcome.pending] == [parked.where]
    assert settle_result(outcome) is None


def test_a_kombu_message_names_its_task_and_eta():
    raw = {"body": "", "headers": {"task": "tiny.work", "id": "abc", "eta": "2030-01-01T00:00:00+00:00",
                                   "retries": 1, "argsrepr": "('j-1',)"}}
    assert describe_message(json.dumps(raw)) == {"task": "tiny.work", "id": "abc", "eta": "2030-01-01T00:00:00+00:00",
                                                 "retries": 1, "argsrepr": "('j-1',)"}
    assert describe_message("not json") == {}
    assert queue_keys("q") == ["q", "q\x06\x163", "q\x06\x166", "q\x06\x169"]


class FakeSQS:
    def __init__(self, queues):
        self.queues = queues

    def list_queues(self):
        return {"QueueUrls": list(self.queues)}

    def get_queue_attributes(self, QueueUrl, AttributeNames):  # noqa: N803 - boto3's names
        return {"Attributes": self.queues[QueueUrl]}


def test_sqs_counts_in_flight_and_delayed_and_parks_dead_letters():
    sqs = FakeSQS({
        "http://sqs/1/jobs": {"QueueArn": "arn:jobs", "ApproximateNumberOfMessages": "0",
                              "ApproximateNumberOfMessagesNotVisible": "1", "ApproximateNumberOfMessagesDelayed": "2",
                              "RedrivePolicy": json.dumps({"deadLetterTargetArn": "arn:dlq", "maxReceiveCount": 4})},
        "http://sqs/1/dlq": {"QueueArn": "arn:dlq", "ApproximateNumberOfMessages": "3"},
    })
    items = {(i.kind, i.where): (i.count, i.blocks) for i in read_sqs(sqs)}
    assert items == {("in-flight message(s)", "sqs queue 'jobs'"): (1, True),
                     ("delayed message(s)", "sqs queue 'jobs'"): (2, True),
                     ("visible message(s)", "sqs dead-letter queue 'dlq'"): (3, False)}


def test_paid_calls_in_flight_are_dated_by_their_start():
    ledger = [{"call_id": 1, "state": "held", "job_id": "j", "step": "s", "attempt": 1, "wall_start": 50.0},
              {"call_id": 2, "state": "done", "job_id": "j", "step": "s", "attempt": 1, "wall_start": 51.0}]
    [item] = calls_in_flight(ledger)
    assert item.kind == "paid call held" and item.since == 50.0


def ev(t, source, name, job, type_="ok", **data):
    return Event(0, t, t, source, type_, name, job, data.get("attempt"), data)


def test_work_on_a_job_the_test_did_not_create_is_leaked_and_named():
    history = History([ev(0, "submit", "submit", "b-1"), ev(1, "job", "state", "b-1", op="INSERT", state="queued"),
                       ev(2, "paidapi", "call", "a-1", type_="invoke"), ev(3, "job", "state", "b-1", op="UPDATE")])
    assert created_jobs(history) == {"b-1"}
    result = no_work_from_earlier_tests(history, {"a-1": "test_x.py::test_a"})
    assert result.valid is False and "leaked from test_x.py::test_a" in result.message
    assert result.details["leaked_from"] == ["test_x.py::test_a"]
    assert [e.job_id for e in without_leaks(history)] == ["b-1", "b-1", "b-1"]
    assert leaked_to_later("test_x.py::test_c", result).name == LEAKED_TO_LATER
    unnamed = no_work_from_earlier_tests(history, {})
    assert "leaked from an earlier test" in unnamed.message


def test_rows_inserted_by_the_test_count_as_its_own():
    history = History([ev(1, "job", "state", "row-1", op="INSERT", state="queued"),
                       ev(2, "paidapi", "call", "row-1", type_="invoke")])
    assert no_work_from_earlier_tests(history, {"row-1": "earlier"}).valid is True


def saved(t, committed_t):
    return ev(t, "write", "step_saved", "j", step="s", attempt=1, committed_t=committed_t)


def call(t):
    return Event(0, t, t, "paidapi", "invoke", "call", "j", 1,
                 {"call_id": 1, "step": "s", "attempt": 1, "state": "done", "billed": True})


def test_a_step_counts_as_done_from_its_commit():
    # saved in a transaction that began at 1, called the provider at 2, committed at 3
    assert no_paid_call_for_done_step(History([call(2), saved(1, 3)]), None).valid is True
    # a call after the commit is one for a step already done
    assert no_paid_call_for_done_step(History([call(4), saved(1, 3)]), None).valid is False


def test_an_attempt_is_dead_from_the_commit_that_declared_it():
    changes = [StateChange(log_id=t, job_id="j", op="UPDATE", t=t, wall=t, txid=t, state=s, attempt=a,
                           committed_at=c, committed_t=c)
               for t, s, a, c in [(0, "queued", 0, 0), (1, "running", 1, 1), (5, "queued", 1, 8)]]
    states = events_from_state_log(changes)
    deaths = events_from_attempt_deaths(attempt_deaths(changes, ("done",)))
    assert deaths[0].data["committed_t"] == 8
    # attempt 1 called at 6: after the requeue statement, before its commit made the fence visible
    early = History([*states, *deaths, call(6)])
    assert no_effect_from_dead_attempt(early, None).valid is True
    late = History([*states, *deaths, call(9)])
    assert no_effect_from_dead_attempt(late, None).valid is False
