"""refused_submission_leaves_nothing: a job written for a submission the user was refused is found."""
from __future__ import annotations

from harness.checks import CHECKERS, UNKNOWN, run_checks
from harness.checks.refused import refused_submission_leaves_nothing
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder


def ask(b: HistoryBuilder, t: float, upload: str, *, status: int | None, job_id: str | None = None,
        answered_after: float = 0.01) -> None:
    """A request for ``upload`` sent at ``t``: accepted (2xx, naming ``job_id``), refused, or (None) answer lost."""
    b.event(v.SUBMIT, "invoke", v.SUBMIT, t, project="p", file=upload)
    at = t + answered_after
    if status is None:
        b.event(v.SUBMIT, "info", v.SUBMIT, at, project="p", file=upload, error="ReadTimeout")
    elif 200 <= status < 300:
        b.event(v.SUBMIT, "ok", v.SUBMIT, at, job_id, status=status, job_id=job_id, project="p", file=upload)
    else:
        b.event(v.SUBMIT, "fail", v.SUBMIT, at, status=status, error=f"HTTP {status}", project="p", file=upload)


def written(b: HistoryBuilder, job_id: str, t: float, state: str = "queued") -> None:
    b.event(v.JOB, "ok", v.STATE, t, job_id, 0, state=state, reason=None, attempt=0, op="INSERT")


def story(late_save: bool) -> HistoryBuilder:
    """One user refused 503 at 5 s, who tries again at 6 s and is accepted; a second user accepted at once."""
    b = HistoryBuilder()
    b.event(v.HARNESS, "ok", v.READ, 0.0, source=v.STATE_LOG_SOURCE, records=4)
    ask(b, 1.0, "other.pdf", status=202, job_id="other")
    written(b, "other", 1.002)
    ask(b, 2.0, "scan.pdf", status=503, answered_after=3.0)  # the save outlasted the deadline
    if late_save:  # the save given up on wrote (and committed) the job anyway
        written(b, "scan", 2.05)
        b.call("scan", 5.5, 6.0, billed=True)
    ask(b, 6.0, "scan.pdf", status=202, job_id="scan")
    if not late_save:
        written(b, "scan", 6.005)
    b.row("other", "done")
    b.row("scan", "done")
    return b


def judge(b: HistoryBuilder):
    return run_checks([refused_submission_leaves_nothing], b.history(), b.snapshot())[
        "refused_submission_leaves_nothing"]


def test_a_refusal_that_left_nothing_and_its_accepted_retry_are_valid():
    result = judge(story(late_save=False))
    assert result.valid is True
    assert result.details == {"refused": 1, "jobs_written": 2}


def test_a_job_written_for_the_refused_request_is_found_even_though_the_retry_names_it():
    result = judge(story(late_save=True))
    assert result.valid is False
    assert result.counterexample == [{"job_id": "scan", "written_at": 2.05, "sent_at": 2.0, "refused_at": 5.0,
                                      "answer": 503, "final_state": "done", "billed_calls": 1}]
    assert "written at 2.050s although the user was answered 503 at 5.000s; it ended 'done', billed 1" \
        in result.message


def test_a_job_no_accepted_submission_names_is_blamed_on_the_refusal_before_it():
    b = HistoryBuilder()
    ask(b, 1.0, "scan.pdf", status=503)
    written(b, "scan", 1.5)  # committed after the answer, and the user never tried again
    b.row("scan", "done")
    assert judge(b).valid is False


def test_a_job_written_after_a_request_whose_answer_was_lost_is_not_judged():
    b = HistoryBuilder()
    ask(b, 1.0, "scan.pdf", status=503)
    ask(b, 2.0, "scan.pdf", status=None)  # the client never heard: the job may be this request's
    written(b, "scan", 2.005)
    b.row("scan", "done")
    assert judge(b).valid is True


def test_without_a_refusal_or_without_the_state_log_it_is_unknown():
    b = HistoryBuilder()
    ask(b, 1.0, "scan.pdf", status=202, job_id="scan")
    written(b, "scan", 1.001)
    assert judge(b).valid == UNKNOWN
    no_log = HistoryBuilder()
    ask(no_log, 1.0, "scan.pdf", status=503)
    result = judge(no_log)
    assert result.valid == UNKNOWN and "state log" in result.message


def test_it_is_shipped_by_name():
    assert CHECKERS["refused_submission_leaves_nothing"] is refused_submission_leaves_nothing
