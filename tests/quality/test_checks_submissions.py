"""no_lost_submission: every 2xx answer leads to a terminal job row."""
from __future__ import annotations

from harness.checks import UNKNOWN, no_lost_submission
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder


def test_accepted_jobs_with_terminal_rows_are_valid():
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.submit("j2", 0.5, status=200)
    b.row("j1", "done")
    b.row("j2", "failed")
    result = no_lost_submission(b.history(), b.snapshot())
    assert result.valid is True and result.details["accepted"] == 2


def test_accepted_job_without_a_row_is_lost():
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.submit("gone", 0.25)
    b.row("j1", "done")
    result = no_lost_submission(b.history(), b.snapshot())
    assert result.valid is False
    assert result.counterexample == [{"job_id": "gone", "at": 0.251, "status": 202, "problem": "no job row"}]


def test_accepted_job_stuck_is_lost():
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.row("j1", "queued")
    result = no_lost_submission(b.history(), b.snapshot())
    assert result.valid is False and "stuck in 'queued'" in result.message


def test_refused_and_unanswered_submissions_are_not_judged():
    b = HistoryBuilder()
    b.submit(None, 0.0, status=503)
    b.submit(None, 0.1, answered=False)
    assert no_lost_submission(b.history(), b.snapshot()).valid is True


def test_accepted_without_job_id_is_unknown():
    b = HistoryBuilder()
    b.event(v.SUBMIT, "ok", v.SUBMIT, 0.0, status=202)
    assert no_lost_submission(b.history(), b.snapshot()).valid == UNKNOWN


def test_no_snapshot_is_unknown():
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    assert no_lost_submission(b.history(), None).valid == UNKNOWN
