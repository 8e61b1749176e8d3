"""Attempt deaths derived from the job state log, and the events they become."""
from harness.evidence import DEFAULT_TERMINAL_STATES as TERMINAL
from harness.evidence import StateChange, attempt_deaths
from harness.evidence.events import events_from_attempt_deaths


def state(t: float, job: str, state: str, attempt: int, committed_t: float | None = None) -> StateChange:
    return StateChange(log_id=int(t * 10), job_id=job, op="UPDATE", t=t, wall=t, txid=1, state=state,
                       attempt=attempt, committed_at=committed_t, committed_t=committed_t)


def deaths(*changes: StateChange) -> list[tuple[str, int, float, str]]:
    return [(e.job_id, e.attempt, e.t, e.data["by"])
            for e in events_from_attempt_deaths(attempt_deaths(changes, TERMINAL))]


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


def test_a_death_is_an_attempt_dead_event_dated_by_the_declaring_commit():
    [death] = events_from_attempt_deaths(attempt_deaths(
        [state(0, "j", "queued", 0), state(1, "j", "running", 1), state(5, "j", "queued", 1, committed_t=8)],
        TERMINAL))
    assert (death.source, death.type, death.name, death.job_id, death.attempt) == ("job", "ok", "attempt_dead", "j", 1)
    assert death.t == 5 and death.data == {"attempt": 1, "by": "requeued", "committed_at": 8, "committed_t": 8}


def test_deleted_rows_are_not_states():
    gone = StateChange(log_id=9, job_id="j", op="DELETE", t=3, wall=3, txid=2)
    assert deaths(state(0, "j", "queued", 0), state(1, "j", "running", 1), gone) == []
