"""timeout_labelled: a job's final reason matches what happened to its last paid call."""
from __future__ import annotations

import pytest

from harness.checks import timeout_labelled
from harness.history.builder import HistoryBuilder

DEADLINE = 2.0


def job_whose_call_took(latency: float | None, reason: str | None, state: str = "failed",
                        call_state: str = "done", status: int = 200) -> HistoryBuilder:
    b = HistoryBuilder()
    b.state("j1", 0.0, "running", attempt=1)
    end = None if latency is None else latency
    b.call("j1", 0.0, end, attempt=1, state=call_state, status=status, client_gone=call_state == "done")
    b.state("j1", 5.0, state, attempt=1, reason=reason)
    b.row("j1", state, reason=reason, updated=5.0)
    return b


def check(b: HistoryBuilder, **options):
    return timeout_labelled(b.history(), b.snapshot(), **options)


def test_call_over_the_deadline_labelled_timeout_is_valid():
    assert check(job_whose_call_took(3.0, "timeout: paid call"), deadline=DEADLINE).valid is True


def test_call_over_the_deadline_labelled_otherwise_is_invalid():
    result = check(job_whose_call_took(3.0, "error"), deadline=DEADLINE)
    assert result.valid is False
    assert result.counterexample[0]["job_id"] == "j1"
    assert result.counterexample[0]["elapsed_s"] == 3.0


def test_call_that_ends_exactly_at_the_deadline_did_not_exceed_it():
    assert check(job_whose_call_took(DEADLINE, "error"), deadline=DEADLINE).valid is True


def test_hung_call_needs_the_label_even_without_a_deadline():
    assert check(job_whose_call_took(None, "crashed", call_state="hung")).valid is False
    assert check(job_whose_call_took(None, "Timeout", call_state="hung")).valid is True


def test_call_that_never_ended_exceeds_the_deadline_at_the_end_of_the_history():
    assert check(job_whose_call_took(None, "failed", call_state="in_flight"), deadline=DEADLINE).valid is False


def test_provider_error_labelled_timeout_is_invalid():
    b = job_whose_call_took(0.1, "timeout", call_state="failed", status=500)
    result = check(b, deadline=DEADLINE)
    assert result.valid is False and "status 500" in result.message


def test_provider_error_labelled_as_such_is_valid():
    assert check(job_whose_call_took(0.1, "provider error 500", call_state="failed", status=500),
                 deadline=DEADLINE).valid is True


@pytest.mark.parametrize("state", ["done", "running"])
def test_successful_or_unfinished_jobs_are_not_judged(state):
    assert check(job_whose_call_took(3.0, None, state=state), deadline=DEADLINE).valid == "unknown"


def test_exact_label():
    b = job_whose_call_took(3.0, "timeout: paid call")
    assert check(b, deadline=DEADLINE, exact=True).valid is False
    assert check(b, deadline=DEADLINE, label="timeout: paid call", exact=True).valid is True


def test_prefix_label():
    b = job_whose_call_took(3.0, "error: gave up after 3 attempts (last: timeout: paid call)")
    assert check(b, deadline=DEADLINE, label="timeout:").valid is True  # contained
    assert check(b, deadline=DEADLINE, label="timeout:", prefix=True).valid is False
    assert check(job_whose_call_took(3.0, "timeout: paid call"), deadline=DEADLINE, label="timeout:",
                 prefix=True).valid is True


def test_only_the_last_call_counts():
    b = HistoryBuilder()
    b.call("j1", 0.0, None, attempt=1, state="hung")
    b.call("j1", 5.0, 5.1, attempt=2, state="failed", status=500)
    b.row("j1", "failed", attempt=2, reason="provider_error")
    assert timeout_labelled(b.history(), b.snapshot(), deadline=DEADLINE).valid is True


def test_empty_history_is_unknown():
    b = HistoryBuilder()
    assert timeout_labelled(b.history(), b.snapshot(), deadline=DEADLINE).valid == "unknown"
