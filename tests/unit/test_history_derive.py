"""Attempt deaths derived from the job state log."""
from harness.history.derive import attempt_deaths
from harness.history.event import Event

TERMINAL = ("done", "failed", "needs_human")


def state(t: float, job: str, state: str, attempt: int) -> Event:
    return Event(0, t, t, "job", "ok", "state", job, attempt, {"state": state, "attempt": attempt})


def deaths(*events: Event) -> list[tuple[str, int, float, str]]:
    return [(e.job_id, e.attempt, e.t, e.data["by"]) for e in attempt_deaths(events, TERMINAL)]


def test_a_clean_run_declares_nobody_dead():
    assert deaths(state(0, "j", "queued", 0), state(1, "j", "running", 1), state(2, "j", "done", 1)) == []


def test_requeue_declares_the_running_attempt_dead():
    assert deaths(state(0, "j", "queued", 0), state(1, "j", "running", 1), state(5, "j", "queued", 1),
                  state(6, "j", "running", 2), state(7, "j", "done", 2)) == [("j", 1, 5, "requeued")]


def test_a_new_claim_declares_the_old_attempt_dead():
    assert deaths(state(0, "j", "queued", 0), state(1, "j", "running", 1), state(3, "j", "running", 2),
                  state(4, "j", "done", 2)) == [("j", 1, 3, "attempt 2 claimed the job")]


def test_a_finished_attempt_is_not_killed_by_a_later_claim():
    assert deaths(state(0, "j", "queued", 0), state(1, "j", "running", 1), state(2, "j", "done", 1),
                  state(3, "j", "running", 2)) == []
