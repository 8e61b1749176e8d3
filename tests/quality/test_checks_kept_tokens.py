"""``no_live_attempt_taken`` on takeovers that keep the attempt number, read from who beat (the beats' ``writer``)."""
from __future__ import annotations

from harness.checks import UNKNOWN, run_checks
from harness.checks.kept_tokens import kept_token_takeovers, writer_pid
from harness.checks.live_attempts import NAME, no_live_attempt_taken
from harness.checks.result import Result
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import OK

STALE = 1.0
FIRST, SECOND = "jobquake:worker1:4242", "jobquake:worker2:5151"


def verdict(b: HistoryBuilder) -> Result:
    return run_checks([no_live_attempt_taken], b.history(), b.snapshot())[NAME]


def beat(b: HistoryBuilder, t: float, writer: str | None, attempt: int = 1) -> None:
    data = {} if writer is None else {"writer": writer}
    b.event(v.HEARTBEAT, OK, v.BEAT, t, "j1", attempt, attempt=attempt, beat_t=b.base + t, **data)


def job(first_beats: list[float], second_at: float, *, again: list[float] = (),
        writers: tuple[str | None, str | None] = (FIRST, SECOND)) -> HistoryBuilder:
    """Attempt 1 claimed at 0.1 by the first process, which beats at ``first_beats``; at ``second_at``
    a second process claims the job again under attempt 1 (the row's attempt never changes) and beats;
    the first beats once more at ``again``."""
    b = HistoryBuilder()
    b.event(v.BUDGET, OK, v.LIMITS, 0.0, chains={}, step_blocked=None, heartbeat_stale=STALE,
            writes_name_attempt=True)
    b.event(v.JOB, OK, v.STATE, 0.0, "j1", 0, state="queued", reason=None, attempt=0, log_id=1)
    b.event(v.JOB, OK, v.STATE, 0.1, "j1", 1, state="running", reason=None, attempt=1, log_id=2)
    for t in first_beats:
        beat(b, t, writers[0])
    beat(b, second_at, writers[1])
    beat(b, second_at + 0.1, writers[1])
    for t in again:
        beat(b, t, writers[0])
    b.event(v.JOB, OK, v.STATE, second_at + 1.0, "j1", 1, state="done", reason=None, attempt=1, log_id=3,
            writer_attempt=1)
    b.row("j1", "done", attempt=1)
    return b


def test_a_token_taken_from_an_attempt_that_stopped_beating_is_valid():
    result = verdict(job([0.1, 0.2, 0.3], second_at=2.0))
    assert result.valid is True, result.message
    assert result.details["dead"] == 1


def test_a_token_taken_while_its_owner_beat_fresh_is_invalid():
    """Two claims read the job queued at once and both wrote attempt 1: the second took a live attempt's job."""
    result = verdict(job([0.1, 0.2], second_at=0.25))
    assert result.valid is False, result.message
    first = result.counterexample[0]
    assert first["why"] == "its heartbeat was fresh"
    assert first["taken"] == f"claimed again under attempt 1 by {SECOND}, from {FIRST}"


def test_a_stale_owner_that_beats_again_under_the_same_token_is_invalid():
    """The owner was frozen (stale, rightly taken), but it kept its token: when it woke it still owned the job."""
    result = verdict(job([0.1, 0.2], second_at=2.0, again=[2.5]))
    assert result.valid is False, result.message
    assert result.counterexample[0]["why"] == "the taken attempt beat again under the same token: both own the job"
    assert result.counterexample[0]["alive_at"] == 2.5


def test_beats_with_no_writer_name_no_owner_and_are_not_judged():
    b = job([0.1, 0.2], second_at=0.25, writers=(None, None))
    assert kept_token_takeovers(b.history()) == []
    assert verdict(b).valid is True  # one attempt beat, nothing was taken


def test_without_a_declared_threshold_it_is_unknown():
    b = HistoryBuilder()
    beat(b, 0.1, FIRST)
    beat(b, 0.2, SECOND)
    assert verdict(b).valid == UNKNOWN


def test_the_pid_is_read_from_the_instrumentations_session_name_only():
    assert writer_pid(FIRST) == 4242
    assert writer_pid("psql") is None and writer_pid("jobquake:api:x") is None
