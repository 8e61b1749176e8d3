"""no_upload_billed_twice: the same upload submitted twice is paid for once."""
from __future__ import annotations

from harness.checks import checkers_by_name
from harness.checks.uploads import no_upload_billed_twice, uploads_by_job
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import INVOKE, OK


def submit(b: HistoryBuilder, t: float, job_id: str | None, project: str = "acme",
           file: str = "scan.pdf", status: int = 202) -> None:
    b.event(v.SUBMIT, INVOKE, v.SUBMIT, t, project=project, file=file)
    if job_id is None:
        b.event(v.SUBMIT, "info", v.SUBMIT, t + 0.01)
    else:
        b.event(v.SUBMIT, OK, v.SUBMIT, t + 0.01, job_id, status=status, job_id=job_id)


def bill_both_documents(b: HistoryBuilder, job_id: str, t: float) -> None:
    for i in range(2):
        b.call(job_id, t + i, t + i + 0.5, step=f"doc-{i}.categorise", key=f"{job_id}:doc-{i}")


def test_a_resent_upload_answered_with_the_same_job_is_valid():
    b = HistoryBuilder()
    submit(b, 0.0, "j1")
    submit(b, 0.1, "j1")  # created: false, nothing started
    bill_both_documents(b, "j1", 1.0)
    result = no_upload_billed_twice(b.history(), None)
    assert result.valid is True
    assert (result.details["uploads"], result.details["jobs"], result.details["billed_calls"]) == (1, 1, 2)


def test_a_resent_upload_run_as_a_second_job_is_invalid():
    b = HistoryBuilder()
    submit(b, 0.0, "j1")
    submit(b, 0.1, "j2")
    bill_both_documents(b, "j1", 1.0)
    bill_both_documents(b, "j2", 1.2)
    result = no_upload_billed_twice(b.history(), None)
    assert result.valid is False
    assert len(result.details["violations"]) == 2
    first, second = result.counterexample
    assert (first["job_id"], second["job_id"], first["step"], second["at"]) == ("j1", "j2", "doc-0.categorise", 1.2)
    assert "upload acme/scan.pdf" in result.message and "jobs j1 and j2" in result.message


def test_different_uploads_and_unbilled_replays_are_not_duplicates():
    b = HistoryBuilder()
    submit(b, 0.0, "j1", file="a.pdf")
    submit(b, 0.1, "j2", file="b.pdf")
    bill_both_documents(b, "j1", 1.0)
    bill_both_documents(b, "j2", 1.0)
    b.call("j1", 5.0, 5.1, step="doc-0.categorise", key="j1:doc-0", state="replayed", billed=False)
    assert no_upload_billed_twice(b.history(), None).valid is True


def test_one_job_billed_twice_is_left_to_no_double_billing():
    b = HistoryBuilder()
    submit(b, 0.0, "j1")
    bill_both_documents(b, "j1", 1.0)
    b.call("j1", 3.0, 3.5, attempt=2, step="doc-1.categorise", key="j1:doc-1:attempt-2")
    assert no_upload_billed_twice(b.history(), None).valid is True


def test_a_third_job_of_the_upload_is_paired_with_the_first():
    b = HistoryBuilder()
    for t, job_id in ((0.0, "j1"), (0.1, "j2"), (0.2, "j3")):
        submit(b, t, job_id)
    for t, job_id in ((1.0, "j1"), (1.1, "j2"), (1.2, "j3")):
        b.call(job_id, t, t + 0.5, step="doc-0.categorise", key=f"{job_id}:doc-0")
    result = no_upload_billed_twice(b.history(), None)
    assert [v["job_ids"] for v in result.details["violations"]] == [["j1", "j2"], ["j1", "j3"]]


def test_answers_pair_with_their_own_requests_and_lost_or_refused_ones_map_nothing():
    b = HistoryBuilder()
    submit(b, 0.0, None, file="lost.pdf")
    submit(b, 0.1, "j1", file="a.pdf")
    submit(b, 0.2, "j9", file="refused.pdf", status=403)
    assert uploads_by_job(b.history()) == {"j1": ("acme", "a.pdf")}


def test_jobs_without_a_recorded_submission_are_not_judged():
    b = HistoryBuilder()
    bill_both_documents(b, "j1", 1.0)
    bill_both_documents(b, "j2", 1.0)
    result = no_upload_billed_twice(b.history(), None)
    assert result.valid == "unknown" and "no upload to follow" in result.message
    assert checkers_by_name(["no_upload_billed_twice"]) == [no_upload_billed_twice]
