"""terminal_is_final: a job that finished and was then worked on again is found and described."""
from __future__ import annotations

from harness.checks import CHECKERS, UNKNOWN
from harness.checks.terminal_final import terminal_is_final
from harness.history.builder import HistoryBuilder


def finished_once() -> HistoryBuilder:
    """Three jobs, each queued, run once, finished; one of them retried before it finished."""
    b = HistoryBuilder()
    for n, state in enumerate(("done", "failed", "needs_human")):
        job = f"j{n}"
        b.submit(job, 0.1 * n)
        b.state(job, 0.1 * n + 0.01, "queued", attempt=0)
        b.state(job, 0.1 * n + 0.02, "running", attempt=1)
        b.state(job, 0.1 * n + 0.05, state, attempt=1)
        b.row(job, state)
    return b


def test_jobs_that_stay_finished_are_valid():
    b = finished_once()
    b.state("retried", 1.0, "running", attempt=1)
    b.state("retried", 1.1, "queued", attempt=1, reason="error: provider returned 500")  # not terminal yet
    b.state("retried", 1.2, "running", attempt=2)
    b.state("retried", 1.3, "done", attempt=2)
    result = terminal_is_final(b.history(), b.snapshot())
    assert result.valid is True
    assert result.details == {"jobs": 4, "finished": 4}
    assert "4 job(s) reached a terminal state and stayed there" in result.message


def test_a_done_job_claimed_again_is_a_violation_with_both_states_times_and_attempts():
    b = finished_once()
    b.state("j0", 2.0, "running", attempt=2)  # a duplicate delivery claimed the finished job
    b.state("j0", 2.5, "done", attempt=2)
    result = terminal_is_final(b.history(), b.snapshot())
    assert result.valid is False
    assert result.counterexample == [{
        "job_id": "j0", "terminal_state": "done", "terminal_at": 0.05, "terminal_attempt": 1,
        "later_state": "running", "later_at": 2.0, "later_attempt": 2, "reason": None}]
    assert result.message == ("1 job(s) left a terminal state; first: job j0 was 'done' (attempt 1) "
                              "at 0.050s, then 'running' (attempt 2) at 2.000s")
    assert result.job_id == "j0"


def test_one_violation_per_job_and_the_earliest_reopening_comes_first():
    b = finished_once()
    b.state("j1", 3.0, "queued", attempt=1, reason="sent again")
    b.state("j1", 3.1, "running", attempt=2)
    b.state("j2", 2.0, "running", attempt=2)
    result = terminal_is_final(b.history(), b.snapshot())
    violations = result.details["violations"]
    assert [(x["job_id"], x["terminal_state"], x["later_state"]) for x in violations] == [
        ("j2", "needs_human", "running"), ("j1", "failed", "queued")]
    assert violations[1]["reason"] == "sent again"
    assert result.counterexample[0]["job_id"] == "j2"


def test_a_deleted_row_and_the_same_final_state_written_again_are_no_change():
    b = finished_once()
    b.state("j0", 1.0, "done", attempt=1, reason="written twice")
    b.event("job", "ok", "deleted", 1.5, "j1", None, log_id=99)
    assert terminal_is_final(b.history(), b.snapshot()).valid is True


def test_a_final_state_turned_into_another_final_state_is_a_violation():
    b = finished_once()
    b.state("j2", 1.0, "done", attempt=1)  # needs_human, then a late attempt wrote done over it
    result = terminal_is_final(b.history(), b.snapshot())
    assert result.valid is False
    assert (result.counterexample[0]["terminal_state"], result.counterexample[0]["later_state"]) == (
        "needs_human", "done")


def test_terminal_states_come_from_the_snapshot_or_the_option():
    b = HistoryBuilder()
    b.state("j1", 0.1, "cancelled", attempt=1)
    b.state("j1", 0.2, "running", attempt=2)
    assert terminal_is_final(b.history(), b.snapshot()).valid == UNKNOWN  # cancelled is not terminal here
    assert terminal_is_final(b.history(), b.snapshot(), terminal_states=["cancelled"]).valid is False
    custom = b.snapshot(terminal_states=("cancelled",))
    assert terminal_is_final(b.history(), custom).valid is False
    assert terminal_is_final(b.history(), None, terminal_states=["cancelled"]).valid is False


def test_without_state_changes_the_verdict_is_unknown():
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.row("j1", "done")
    result = terminal_is_final(b.history(), b.snapshot())
    assert result.valid == UNKNOWN
    assert "state log" in result.message


def test_it_is_a_shipped_checker_asked_for_by_name():
    assert CHECKERS["terminal_is_final"] is terminal_is_final


def test_users_told_a_final_state_and_then_another_is_a_violation():
    b = finished_once()
    b.status("j0", 0.06, "done")
    b.status("j0", 0.5, "failed")  # the screen said done, then failed
    result = terminal_is_final(b.history(), b.snapshot())
    assert result.valid is False
    assert result.counterexample[0]["told"] is True
    assert "job j0 users were told 'done' (attempt None) at 0.060s, then 'failed'" in result.message


def test_a_late_event_of_an_earlier_state_is_left_to_the_stream_checks_but_a_newer_attempt_is_not():
    b = finished_once()
    b.event("event", "ok", "status", 0.06, "j0", 1, state="done")
    b.event("event", "ok", "status", 0.07, "j0", 1, state="running")  # attempt 1's own start, delivered late
    assert terminal_is_final(b.history(), b.snapshot()).valid is True
    b.event("event", "ok", "status", 0.08, "j0", 2, state="running")  # a new attempt after the final state
    assert terminal_is_final(b.history(), b.snapshot()).valid is False


def test_status_events_alone_are_evidence():
    b = HistoryBuilder()
    b.status("j1", 0.1, "done")
    assert terminal_is_final(b.history(), b.snapshot()).valid is True
