"""no_paid_call_for_done_step: a paid call for a step whose result was already committed."""
from __future__ import annotations

from harness.checks import UNKNOWN, checkers_by_name
from harness.checks.done_steps import STEP_SAVED, no_paid_call_for_done_step
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import OK

KEY = "refapp:j1:doc-0.categorise"


def saved(b: HistoryBuilder, job_id: str, step: str, t: float, attempt: int = 1) -> None:
    """The app committed the result of ``step`` at ``t``."""
    b.event(v.WRITE, OK, STEP_SAVED, t, job_id, attempt, step=step, table="step_results",
            call_id="call-1", refused=False)


def crashed_after_saving_doc_0() -> HistoryBuilder:
    """Attempt 1 pays for and saves document 0, then dies; attempt 2 pays for document 1 only."""
    b = HistoryBuilder()
    b.call("j1", 0.0, 0.5, attempt=1, step="doc-0.categorise", key=KEY)
    saved(b, "j1", "doc-0.categorise", 0.6)
    b.call("j1", 2.0, 2.5, attempt=2, step="doc-1.categorise", key="refapp:j1:doc-1.categorise")
    saved(b, "j1", "doc-1.categorise", 2.6, attempt=2)
    return b


def test_each_step_paid_for_before_it_was_saved_is_valid():
    result = no_paid_call_for_done_step(crashed_after_saving_doc_0().history(), None)
    assert result.valid is True
    assert (result.details["calls"], result.details["saved_steps"]) == (2, 2)


def test_a_replayed_call_for_a_saved_step_is_invalid():
    b = crashed_after_saving_doc_0()
    b.call("j1", 1.9, 1.95, attempt=2, step="doc-0.categorise", key=KEY, state="replayed",
           billed=False, replay_of="call-1")
    result = no_paid_call_for_done_step(b.history(), None)
    assert result.valid is False
    save, call = result.counterexample
    assert (save["job_id"], save["step"], save["attempt"], save["saved_at"]) == ("j1", "doc-0.categorise", 1, 0.6)
    assert (call["attempt"], call["at"], call["billed"], call["state"]) == (2, 1.9, False, "replayed")
    assert "saved by attempt 1 at 0.600s" in result.message and "replayed" in result.message


def test_a_call_still_open_or_failed_counts_too():
    b = crashed_after_saving_doc_0()
    b.call("j1", 3.0, None, attempt=2, step="doc-0.categorise", key=KEY, state="hung")
    b.call("j1", 3.5, 3.6, attempt=2, step="doc-0.categorise", key=KEY, state="failed", status=500)
    result = no_paid_call_for_done_step(b.history(), None)
    assert result.valid is False
    assert [x["called_at"] for x in result.details["violations"]] == [3.0, 3.5]


def test_a_call_started_before_the_save_committed_is_valid():
    """Two racing calls both started before the save: neither could have known."""
    b = HistoryBuilder()
    b.call("j1", 0.0, 0.5, attempt=1, step="doc-0.categorise", key=KEY)
    b.call("j1", 0.55, 0.7, attempt=2, step="doc-0.categorise", key=KEY, state="replayed", billed=False)
    saved(b, "j1", "doc-0.categorise", 0.6)
    assert no_paid_call_for_done_step(b.history(), None).valid is True


def test_slack_forgives_calls_just_after_the_save():
    b = crashed_after_saving_doc_0()
    b.call("j1", 0.65, 0.7, attempt=2, step="doc-0.categorise", key=KEY, state="replayed", billed=False)
    assert no_paid_call_for_done_step(b.history(), None).valid is False
    assert no_paid_call_for_done_step(b.history(), None, slack=0.1).valid is True


def test_the_earliest_save_of_a_step_counts_and_other_jobs_are_apart():
    b = crashed_after_saving_doc_0()
    saved(b, "j1", "doc-0.categorise", 5.0, attempt=2)  # recorded twice: the first save stands
    b.call("j2", 4.0, 4.5, step="doc-0.categorise", key="refapp:j2:doc-0.categorise")
    b.call("j1", 4.0, 4.1, attempt=2, step="doc-0.categorise", key=KEY, state="replayed", billed=False)
    result = no_paid_call_for_done_step(b.history(), None)
    assert result.valid is False
    assert [(x["job_id"], x["saved_at"]) for x in result.details["violations"]] == [("j1", 0.6)]


def test_paid_calls_without_any_saved_step_evidence_are_unknown():
    b = HistoryBuilder()
    b.call("j1", 0.0, 0.5, step="doc-0.categorise", key=KEY)
    result = no_paid_call_for_done_step(b.history(), None)
    assert result.valid == UNKNOWN
    assert STEP_SAVED in result.message


def test_an_empty_history_is_unknown_and_the_checker_is_registered():
    assert no_paid_call_for_done_step(HistoryBuilder().history(), None).valid == UNKNOWN
    assert checkers_by_name(["no_paid_call_for_done_step"]) == [no_paid_call_for_done_step]
