"""``no_live_attempt_taken`` on constructed histories: valid, invalid (fresh / alive but silent), unknown."""
from __future__ import annotations

from harness.checks import UNKNOWN, run_checks
from harness.history.vocabulary import LIMITS
from harness.checks.generic import applicable
from harness.checks.live_attempts import NAME, no_live_attempt_taken
from harness.checks.result import Result
from harness.history import vocabulary as v
from harness.history.builder import WALL_OFFSET, HistoryBuilder
from harness.history.event import OK

STALE = 1.0
WORKER_CHILD = 4242


def verdict(b: HistoryBuilder) -> Result:
    return run_checks([no_live_attempt_taken], b.history(), b.snapshot())[NAME]


def change(b: HistoryBuilder, t: float, state: str, attempt: int, writer: int | None, log_id: int) -> None:
    data = {"state": state, "reason": None, "attempt": attempt, "log_id": log_id}
    if writer is not None:
        data["writer_attempt"] = writer
    b.event(v.JOB, OK, v.STATE, t, "j1", attempt, **data)


def beats(b: HistoryBuilder, attempt: int, *times: float, wall_step: float | None = None) -> None:
    """``wall_step``: the beats also carry their wall time, as read before the wall clock was stepped
    forward by that much (0: never stepped)."""
    for t in times:
        wall = {} if wall_step is None else {"beat_at": WALL_OFFSET + t - wall_step}
        b.event(v.HEARTBEAT, OK, v.BEAT, t, "j1", attempt, attempt=attempt, beat_t=b.base + t, **wall)


def job(taken_at: float, last_beat: float, *, call_end: float | None = None, stale: float | None = STALE,
        taken_by_claim: bool = False, names_writers: bool = True, wall_step: float | None = None) -> HistoryBuilder:
    """Attempt 1 beats from 0.1 to ``last_beat`` while its one paid call runs from 0.15 to ``call_end``;
    at ``taken_at`` a sweeper re-queues the job (or attempt 2 claims it); attempt 2 finishes."""
    b = HistoryBuilder()
    if stale is not None:
        b.event(v.BUDGET, OK, LIMITS, 0.0, chains={}, step_blocked=None, heartbeat_stale=stale,
                writes_name_attempt=names_writers)
    change(b, 0.0, "queued", 0, None, 1)
    change(b, 0.1, "running", 1, None, 2)
    beats(b, 1, *[round(0.1 + 0.1 * i, 3) for i in range(int(round((last_beat - 0.1) / 0.1)) + 1)],
          wall_step=wall_step)
    b.call("j1", 0.15, call_end, attempt=1, step="doc-0", caller_pid=WORKER_CHILD,
           state="done" if call_end is not None else "in_flight")
    if taken_by_claim:
        change(b, taken_at, "running", 2, None, 3)
    else:
        change(b, taken_at, "queued", 1, None, 3)
        change(b, taken_at + 0.2, "running", 2, None, 4)
    beats(b, 2, taken_at + 0.2)
    change(b, taken_at + 1.0, "done", 2, 2, 5)
    b.row("j1", "done", attempt=2)
    return b


def test_a_job_taken_from_an_attempt_silent_and_showing_no_life_is_valid():
    result = verdict(job(taken_at=2.5, last_beat=1.0, call_end=None))
    assert result.valid is True, result.message
    assert result.details["dead"] == 1


def test_a_claim_while_the_owners_heartbeat_is_fresh_is_invalid():
    result = verdict(job(taken_at=1.05, last_beat=1.0, call_end=3.0, taken_by_claim=True))
    assert result.valid is False
    first = result.counterexample[0]
    assert first["why"] == "its heartbeat was fresh" and first["taken"] == "attempt 2 claimed the job"


def test_a_claim_the_wall_clock_made_stale_is_excused():
    """The wall clock the app judges beats by was stepped 1.7 s forward between the last beat and the claim:
    by the app's own clock the beat was stale, though on the monotonic timeline only 0.05 s passed."""
    result = verdict(job(taken_at=1.05, last_beat=1.0, call_end=3.0, taken_by_claim=True, wall_step=1.7))
    assert result.valid is True, result.message
    assert result.details["excused"] == 1


def test_a_claim_fresh_by_the_wall_clock_too_is_still_invalid():
    result = verdict(job(taken_at=1.05, last_beat=1.0, call_end=3.0, taken_by_claim=True, wall_step=0.0))
    assert result.valid is False and result.counterexample[0]["why"] == "its heartbeat was fresh"


def test_a_requeue_of_an_attempt_alive_and_silent_with_nothing_in_its_way_is_invalid():
    """The heartbeat stopped at 0.5 while the attempt's call ran on to 3.0: its heartbeat died, it did not."""
    result = verdict(job(taken_at=2.0, last_beat=0.5, call_end=3.0))
    assert result.valid is False
    first = result.counterexample[0]
    assert first["taken"].startswith("re-queued") and "alive" in first["why"] and first["alive_at"] >= 1.5


def test_a_frozen_owner_excuses_the_takeover():
    b = job(taken_at=2.0, last_beat=0.5, call_end=3.0)
    b.fault("pause_service", 0.55, 2.8, details={"pid": 4000, "tree": [4000, WORKER_CHILD], "role": "worker"},
            service="worker1")
    result = verdict(b)
    assert result.valid is True and result.details["excused"] == 1


def test_a_frozen_other_worker_does_not_excuse_it():
    b = job(taken_at=1.05, last_beat=1.0, call_end=3.0, taken_by_claim=True)
    b.fault("pause_service", 0.55, 2.8, details={"pid": 5000, "tree": [5000, 5001], "role": "worker"},
            service="worker2")
    assert verdict(b).valid is False


def test_a_database_outage_in_the_last_stale_window_excuses_the_silence():
    b = job(taken_at=2.0, last_beat=0.5, call_end=3.0)
    b.fault("database_restart", 0.6, 1.9)
    assert verdict(b).valid is True


def test_a_database_blip_long_before_the_takeover_does_not_excuse_a_heartbeat_that_never_came_back():
    b = job(taken_at=2.5, last_beat=0.5, call_end=3.0)
    b.fault("database_restart", 0.55, 0.8)  # healed 1.7 s before the takeover; a live heartbeat beats again
    result = verdict(b)
    assert result.valid is False and "alive" in result.counterexample[0]["why"]


def test_a_slow_provider_does_not_excuse_the_silence():
    b = job(taken_at=2.0, last_beat=0.5, call_end=3.0)
    b.fault("paidapi_mode", 0.0, None, mode="slow")
    assert verdict(b).valid is False


def test_an_owner_that_gives_the_job_back_itself_is_no_takeover():
    b = HistoryBuilder()
    b.event(v.BUDGET, OK, LIMITS, 0.0, chains={}, step_blocked=None, heartbeat_stale=STALE,
            writes_name_attempt=True)
    change(b, 0.0, "queued", 0, None, 1)
    change(b, 0.1, "running", 1, None, 2)
    beats(b, 1, 0.1, 0.2, 0.3)
    change(b, 0.35, "queued", 1, 1, 3)  # its own cap: written by attempt 1
    b.row("j1", "queued", attempt=1)
    result = verdict(b)
    assert result.valid is True and result.details["judged"] == 0 and result.details["owners"] == 1


def test_without_heartbeats_or_a_threshold_it_is_unknown_and_not_switched_on():
    no_beats = HistoryBuilder()
    no_beats.event(v.BUDGET, OK, LIMITS, 0.0, chains={}, step_blocked=None, heartbeat_stale=STALE)
    change(no_beats, 0.0, "queued", 0, None, 1)
    no_beats.row("j1", "queued", attempt=0)
    result = verdict(no_beats)
    assert result.valid == UNKNOWN and "heartbeat" in result.message

    no_threshold = job(taken_at=2.0, last_beat=0.5, call_end=3.0, stale=None)
    result = verdict(no_threshold)
    assert result.valid == UNKNOWN and "heartbeat_stale" in result.message
    assert no_live_attempt_taken not in applicable(no_threshold.history(), no_threshold.snapshot())


def test_switched_on_where_heartbeats_and_a_threshold_exist():
    b = job(taken_at=2.5, last_beat=1.0)
    assert no_live_attempt_taken in applicable(b.history(), b.snapshot())


def test_an_app_that_does_not_name_its_writers_is_judged_on_claims_alone():
    """A re-queue naming no writer may be the owner's own: without the declaration it is not judged."""
    requeued = verdict(job(taken_at=2.0, last_beat=0.5, call_end=3.0, names_writers=False))
    assert requeued.valid is True and requeued.details["judged"] == 0
    claimed = verdict(job(taken_at=1.05, last_beat=1.0, call_end=3.0, taken_by_claim=True, names_writers=False))
    assert claimed.valid is False


def test_an_owner_without_paid_calls_is_found_by_its_task_run():
    """Attempt 1 made no paid call yet; the instrumentation's task run names its process, which no
    fault touched: a pause of another worker does not excuse the re-queue of a fresh attempt."""
    b = HistoryBuilder()
    b.event(v.BUDGET, OK, LIMITS, 0.0, chains={}, step_blocked=None, heartbeat_stale=STALE,
            writes_name_attempt=True)
    change(b, 0.0, "queued", 0, None, 1)
    b.event(v.INSTRUMENT, "invoke", "task", 0.05, "j1", None, pid=5001, task="process_job", task_id="t-1")
    change(b, 0.1, "running", 1, None, 2)
    beats(b, 1, 0.1, 0.2)
    change(b, 0.25, "queued", 1, None, 3)  # the sweeper, 0.05 s after a beat
    b.fault("pause_service", 0.0, 2.8, details={"pid": 7000, "tree": [7000, 7001], "role": "worker"},
            service="worker2")
    b.row("j1", "queued", attempt=1)
    result = verdict(b)
    assert result.valid is False and result.counterexample[0]["why"] == "its heartbeat was fresh"

    b.event(v.INSTRUMENT, "invoke", "task", 0.06, "j1", None, pid=7001, task="process_job", task_id="t-0")
    assert verdict(b).valid is True  # a run on the frozen worker too: it may have been the owner


def _killing_failpoint(b: HistoryBuilder, pid: int) -> None:
    """A failpoint armed to kill the process that reaches it, fired once by process ``pid``."""
    b.fault("failpoint", 0.05, None, at="relay.between_send_and_mark", action="kill", once=True)
    b.event(v.FAILPOINT, OK, "relay.between_send_and_mark", 0.06, action="kill", pid=pid, context={}, hit=1)


def test_a_process_that_killed_itself_elsewhere_does_not_excuse_the_claim():
    """The relay died at its failpoint; the owner, a worker's child, beat on: a claim while it was fresh."""
    b = job(taken_at=1.05, last_beat=1.0, call_end=3.0, taken_by_claim=True)
    _killing_failpoint(b, pid=WORKER_CHILD + 1)
    assert verdict(b).valid is False


def test_the_owner_killed_at_a_failpoint_excuses_the_claim():
    b = job(taken_at=1.05, last_beat=1.0, call_end=3.0, taken_by_claim=True)
    _killing_failpoint(b, pid=WORKER_CHILD)
    result = verdict(b)
    assert result.valid is True and result.details["excused"] == 1, result.message
