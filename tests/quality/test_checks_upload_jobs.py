"""each_upload_its_own_job: two different uploads are never answered with one job."""
from __future__ import annotations

from harness.checks import UNKNOWN, run_checks
from harness.checks.generic import applicable
from harness.checks.runner import checker_name
from harness.checks.upload_jobs import NAME, accepted_uploads, each_upload_its_own_job
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import INVOKE, OK


def submit(b: HistoryBuilder, t: float, job_id: str | None, project: str, file: str = "invoice.pdf",
           status: int = 202) -> None:
    b.event(v.SUBMIT, INVOKE, v.SUBMIT, t, project=project, file=file)
    if job_id is None:
        b.event(v.SUBMIT, "fail", v.SUBMIT, t + 0.01, status=503)
    else:
        b.event(v.SUBMIT, OK, v.SUBMIT, t + 0.01, job_id, status=status, job_id=job_id)


def verdict(b: HistoryBuilder):
    return run_checks([each_upload_its_own_job], b.history(), b.snapshot())[NAME]


def test_different_uploads_as_different_jobs_are_valid():
    b = HistoryBuilder()
    submit(b, 0.0, "j1", "acme")
    submit(b, 0.1, "j2", "initech")
    submit(b, 0.2, "j1", "acme")  # the same upload again: the same job, as it should be
    result = verdict(b)
    assert result.valid is True
    assert (result.details["uploads"], result.details["jobs"], result.details["judged"]) == (2, 2, 3)


def test_another_projects_file_answered_with_the_first_projects_job_is_invalid():
    b = HistoryBuilder()
    submit(b, 0.0, "j1", "acme")
    submit(b, 0.5, "j1", "initech")  # same file name, another project: the job id ignored the project
    result = verdict(b)
    assert result.valid is False
    assert result.counterexample[0] | {"at": None, "first_at": None} == {
        "job_id": "j1", "upload": "initech/invoice.pdf", "job_of": "acme/invoice.pdf", "at": None,
        "first_at": None, "status": 202}
    assert "upload initech/invoice.pdf accepted at 0.510s as job j1, the job of upload acme/invoice.pdf" \
        in result.message


def test_the_upload_named_on_the_answer_itself_wins_over_pairing():
    b = HistoryBuilder()  # two requests in flight at once: the answers carry their own upload
    b.event(v.SUBMIT, INVOKE, v.SUBMIT, 0.0, project="acme", file="a.pdf")
    b.event(v.SUBMIT, INVOKE, v.SUBMIT, 0.0, project="initech", file="a.pdf")
    b.event(v.SUBMIT, OK, v.SUBMIT, 0.1, "j1", status=202, job_id="j1", project="acme", file="a.pdf")
    b.event(v.SUBMIT, OK, v.SUBMIT, 0.1, "j2", status=202, job_id="j2", project="initech", file="a.pdf")
    assert [(a.upload, a.job_id) for a in accepted_uploads(b.history())] == [
        (("acme", "a.pdf"), "j1"), (("initech", "a.pdf"), "j2")]
    assert verdict(b).valid is True


def test_refused_submissions_are_not_judged():
    b = HistoryBuilder()
    submit(b, 0.0, "j1", "acme")
    submit(b, 0.1, None, "initech")
    result = verdict(b)
    assert result.valid == UNKNOWN and "only one upload" in result.message


def test_no_submission_naming_its_upload_is_unknown():
    b = HistoryBuilder()
    b.event(v.SUBMIT, INVOKE, v.SUBMIT, 0.0, function="app:submit", args={})
    b.event(v.SUBMIT, OK, v.SUBMIT, 0.1, "j1", status=202, job_id="j1")
    result = verdict(b)
    assert result.valid == UNKNOWN and "named its upload" in result.message


def test_switched_on_by_two_uploads_only():
    one, two = HistoryBuilder(), HistoryBuilder()
    submit(one, 0.0, "j1", "acme")
    submit(two, 0.0, "j1", "acme")
    submit(two, 0.1, "j2", "initech")
    assert NAME not in [checker_name(c) for c in applicable(one.history(), one.snapshot())]
    assert NAME in [checker_name(c) for c in applicable(two.history(), two.snapshot())]
