"""retries_keep_spacing_and_budget: retries too soon, a job given up early, a retried time limit are found."""
from __future__ import annotations

from harness.checks import CHECKERS, UNKNOWN, run_checks
from harness.checks.retries import retries_keep_spacing_and_budget
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder

POLICY = {"backoff": 2.0, "max_attempts": 3}


class Job:
    """One job's state log, each change with its log id and the attempt that wrote it."""

    def __init__(self, b: HistoryBuilder, job_id: str = "j1"):
        self.b, self.job_id, self.log_id = b, job_id, 0

    def change(self, t: float, state: str, attempt: int, writer: int | None = None, reason: str | None = None):
        self.log_id += 1
        data = {"state": state, "reason": reason, "attempt": attempt, "log_id": self.log_id,
                **({} if writer is None else {"writer_attempt": writer})}
        self.b.event(v.JOB, "ok", v.STATE, t, self.job_id, attempt, **data)
        return self

    def attempt(self, n: int, start: float, failed_at: float) -> "Job":
        """Attempt ``n`` claims the job at ``start`` and gives it back (re-queues it) at ``failed_at``."""
        return self.change(start, "running", n).change(failed_at, "queued", n, writer=n,
                                                         reason=f"error: 500 on attempt {n}")


def declared(b: HistoryBuilder, policy: dict | None = POLICY) -> HistoryBuilder:
    b.event(v.BUDGET, "ok", v.LIMITS, 0.0, chains={}, **({"retries": policy} if policy else {}))
    return b


def judge(b: HistoryBuilder):
    return run_checks([retries_keep_spacing_and_budget], b.history(), b.snapshot())[
        "retries_keep_spacing_and_budget"]


def test_retries_after_the_backoff_and_a_give_up_after_every_attempt_are_valid():
    b = declared(HistoryBuilder())
    job = Job(b).change(0.1, "queued", 0)
    job.attempt(1, 0.2, 0.5).attempt(2, 2.6, 3.0).attempt(3, 5.1, 5.4)
    job.change(7.5, "failed", 3, reason="error: gave up after 3 attempts")
    result = judge(b)
    assert result.valid is True
    assert result.details["judged"] == 3


def test_an_attempt_sooner_than_the_backoff_is_a_violation_with_both_times():
    b = declared(HistoryBuilder())
    Job(b).change(0.1, "queued", 0).attempt(1, 0.2, 0.5).change(0.75, "running", 2).change(1.0, "done", 2, writer=2)
    result = judge(b)
    assert result.valid is False
    assert result.counterexample == [{"job_id": "j1", "attempt": 1, "gave_back_at": 0.5,
                                      "reason": "error: 500 on attempt 1", "kind": "too soon", "next_attempt": 2,
                                      "next_at": 0.75, "waited_s": 0.25, "backoff_s": 2.0}]
    assert result.message == ("1 retry rule(s) broken; first: job j1: the next attempt came 0.25s after attempt 1 "
                              "failed, the declared backoff is 2s")


def test_a_job_given_up_before_its_last_attempt_is_a_violation():
    b = declared(HistoryBuilder())
    job = Job(b).change(0.1, "queued", 0).attempt(1, 0.2, 0.5).attempt(2, 2.6, 3.0)
    job.change(5.2, "failed", 2, reason="error: gave up after 2 attempts")
    result = judge(b)
    assert result.valid is False
    assert result.counterexample[0]["kind"] == "given up after fewer attempts"
    assert "was given up after fewer attempts: 2 attempt(s), 3 declared" in result.message


def test_more_attempts_than_declared_is_a_violation():
    b = declared(HistoryBuilder(), {"backoff": 0.0, "max_attempts": 1})
    Job(b).change(0.1, "queued", 0).attempt(1, 0.2, 0.5).change(0.6, "running", 2).change(0.9, "done", 2, writer=2)
    result = judge(b)
    assert result.valid is False
    assert {v["kind"] for v in result.details["violations"]} == {"more attempts than declared"}


def test_a_rescue_by_someone_else_is_not_a_retry():
    b = declared(HistoryBuilder())
    job = Job(b).change(0.1, "queued", 0).change(0.2, "running", 1)
    job.change(1.5, "queued", 1, reason="attempt 1 stopped heartbeating; sent again")  # the sweeper, no writer
    job.change(1.6, "running", 2).change(2.0, "done", 2, writer=2)
    assert judge(b).valid == UNKNOWN  # nothing was retried: no attempt gave its job back


def test_a_celery_task_retried_after_its_soft_time_limit_is_a_violation():
    b = HistoryBuilder()
    b.event(v.INSTRUMENT, "ok", v.RETRY, 6.0, "j1", 1, task="refapp.process_job", task_id="t1", retries=0,
            cause="SoftTimeLimitExceeded", due_in_s=1.0, max_retries=3, default_retry_delay=1.0, retry_backoff=False)
    result = judge(b)
    assert result.valid is False
    assert result.message == ("1 retry rule(s) broken; first: job j1: task refapp.process_job [t1] was retried "
                              "after SoftTimeLimitExceeded")


def test_a_celery_retry_due_sooner_than_declared_is_a_violation_and_one_as_declared_is_valid():
    b = HistoryBuilder()
    b.event(v.INSTRUMENT, "ok", v.RETRY, 1.0, "j1", 1, task="t", task_id="t1", retries=0,
            cause="OperationalError", due_in_s=1.0, max_retries=3, default_retry_delay=1.0, retry_backoff=False)
    assert judge(b).valid is True
    b.event(v.INSTRUMENT, "ok", v.RETRY, 2.0, "j1", 2, task="t", task_id="t1", retries=1,
            cause="OperationalError", due_in_s=0.0, max_retries=3, default_retry_delay=1.0, retry_backoff=False)
    assert judge(b).counterexample[0]["kind"] == "too soon"


def test_without_a_policy_or_a_retry_it_is_unknown():
    b = HistoryBuilder()
    Job(b).change(0.1, "queued", 0).attempt(1, 0.2, 0.5)
    assert judge(b).valid == UNKNOWN  # no declared policy
    quiet = declared(HistoryBuilder())
    Job(quiet).change(0.1, "queued", 0).change(0.2, "running", 1).change(0.5, "done", 1, writer=1)
    assert judge(quiet).valid == UNKNOWN  # nothing was retried


def test_it_is_shipped_by_name():
    assert CHECKERS["retries_keep_spacing_and_budget"] is retries_keep_spacing_and_budget
