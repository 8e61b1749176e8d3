"""``streams_agree_with_db``: a status stream tells the database's states, in order, and the final one."""
from __future__ import annotations

from harness.checks import UNKNOWN, run_checks
from harness.history.vocabulary import READ, STREAMS_SOURCE
from harness.checks.result import Result
from harness.checks.streams import NAME, streams_agree_with_db
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import INFO, OK
from harness.history.timing import COMMITTED_T

# job j1's life in the database: queued (0), running (1), queued again (1: sent again), running (2), done (2)
LIFE = [(0.0, "queued", 0), (0.5, "running", 1), (1.5, "queued", 1), (2.0, "running", 2), (3.0, "done", 2)]


def verdict(b: HistoryBuilder) -> Result:
    return run_checks([streams_agree_with_db], b.history(), b.snapshot())[NAME]


def life(b: HistoryBuilder, *, final: str = "done", attempt: int = 2) -> None:
    for log_id, (t, state, n) in enumerate(LIFE, start=1):
        b.event(v.JOB, OK, v.STATE, t, "j1", n, state=state, reason=None, attempt=n, log_id=log_id,
                **{COMMITTED_T: b.base + t + 0.01})
    b.row("j1", final, attempt=attempt)


def stream(b: HistoryBuilder, told: list[tuple[float, str, int]], *, job_id: str | None = None,
           closed: tuple[float, str, bool] | None = None, connected: bool = True, name: str = "all-jobs") -> None:
    b.event(v.EVENT, OK, v.STREAM_OPENED, 0.01, job_id, stream=name, url="http://api/events", job_id=job_id,
            reconnect=False)
    for t, state, attempt in told:
        b.event(v.EVENT, OK, v.STATUS, t, "j1", attempt, state=state, stream=name, event_id=str(t))
    if closed is not None:
        t, by, terminal = closed
        b.event(v.EVENT, INFO, v.STREAM_CLOSED, t, job_id, stream=name, by=by, error=None, told_terminal=terminal)
    b.event(v.HARNESS, OK, READ, 4.0, source=STREAMS_SOURCE, records=len(told),
            streams=[{"stream": name, "job_id": job_id, "connected": connected, "caught_up": connected}])


def test_a_dashboard_told_each_state_in_order_and_the_final_one_is_valid():
    b = HistoryBuilder()
    life(b)
    stream(b, [(0.52, "running", 1), (1.6, "queued", 1), (2.02, "running", 2), (3.05, "done", 2)])
    result = verdict(b)
    assert result.valid is True, result.message
    assert (result.details["told"], result.details["jobs"]) == (4, 1)


def test_a_stream_that_skips_a_lost_state_but_tells_the_final_one_is_valid():
    b = HistoryBuilder()
    life(b)
    stream(b, [(0.52, "running", 1), (3.4, "done", 2)])  # queued and running (2) lost; caught up from the database
    assert verdict(b).valid is True


def test_an_older_attempts_state_after_a_newer_one_is_a_replay():
    b = HistoryBuilder()
    life(b)
    stream(b, [(0.52, "running", 1), (2.02, "running", 2), (2.5, "queued", 1), (3.05, "done", 2)])
    result = verdict(b)
    assert result.valid is False
    assert "went backwards" in result.counterexample[0]["why"]


def test_a_stream_that_never_tells_the_final_state_is_invalid():
    """An event was lost (Redis away when the worker published) and the stream never caught up."""
    b = HistoryBuilder()
    life(b)
    stream(b, [(0.52, "running", 1), (2.02, "running", 2)])
    result = verdict(b)
    assert result.valid is False
    assert result.counterexample[0]["final"] == "done"


def test_a_stream_cut_off_at_the_end_is_not_held_to_the_final_state():
    b = HistoryBuilder()
    life(b)
    stream(b, [(0.52, "running", 1)], connected=False)
    assert verdict(b).valid is True


def test_a_state_told_before_the_database_had_it_is_invalid():
    b = HistoryBuilder()
    life(b)
    stream(b, [(0.52, "running", 1), (2.6, "done", 2), (3.05, "done", 2)])
    result = verdict(b)
    assert result.valid is False and "did not have (yet)" in result.counterexample[0]["why"]


def test_a_jobs_stream_the_server_ends_at_a_requeue_ended_early():
    b = HistoryBuilder()
    life(b)
    stream(b, [(0.02, "queued", 0), (0.52, "running", 1), (1.6, "queued", 1)], job_id="j1", name="job-j1",
           closed=(1.61, "server", False), connected=False)
    result = verdict(b)
    assert result.valid is False
    assert "before the job's end" in result.counterexample[0]["why"]


def test_a_jobs_stream_ending_while_its_server_restarted_is_excused():
    b = HistoryBuilder()
    life(b)
    b.fault("stop_service", 1.55, 1.9, details={"role": "app"}, service="api")
    stream(b, [(0.02, "queued", 0), (0.52, "running", 1)], job_id="j1", name="job-j1",
           closed=(1.6, "server", False), connected=False)
    assert verdict(b).valid is True


def test_no_stream_or_a_silent_one_is_unknown():
    b = HistoryBuilder()
    life(b)
    assert verdict(b).valid == UNKNOWN
    stream(b, [])
    assert verdict(b).valid == UNKNOWN
