"""soft_limit_honoured on synthetic histories: valid, invalid, excused by a frozen worker, unknown."""
from __future__ import annotations

from harness.checks import UNKNOWN, run_checks
from harness.checks.generic import applicable
from harness.history.vocabulary import READ, WORKER_LOG_SOURCE
from harness.checks.result import Result
from harness.checks.time_limits import NAME, soft_limit_honoured
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import OK

HARD = 9.0


def verdict(b: HistoryBuilder) -> Result:
    return run_checks([soft_limit_honoured], b.history(), b.snapshot())[NAME]


def run(*kills_at: float, logs_read: bool = True, received: int = 2) -> HistoryBuilder:
    """One job done at 12 s; the workers' logs read at the end, with a hard-limit kill at each of ``kills_at``."""
    b = HistoryBuilder()
    b.state("j1", 0.0, "queued", 0)
    b.state("j1", 0.1, "running", 1)
    for t in kills_at:
        b.event(v.WORKER, OK, v.HARD_LIMIT, t, worker="worker1", task="app.process", task_id="t-1", limit_s=HARD)
    b.state("j1", 12.0, "done", 2)
    if logs_read:
        b.event(v.HARNESS, OK, READ, 12.5, source=WORKER_LOG_SOURCE, records=len(kills_at), tasks_received=received)
    b.row("j1", "done", attempt=2)
    return b


def test_logs_read_and_no_task_killed_at_its_hard_limit_is_valid():
    result = verdict(run())
    assert result.valid is True, result.message


def test_a_task_killed_at_its_hard_limit_is_invalid_and_named():
    result = verdict(run(9.1))
    assert result.valid is False
    assert "app.process[t-1]" in result.message and "9s hard limit" in result.message
    assert result.counterexample[0]["worker"] == "worker1"


def test_a_worker_frozen_during_the_tasks_run_excuses_the_kill():
    b = run(9.1)
    b.fault("pause_service", 2.0, 8.0, details={"pid": 4000, "role": "worker"}, service="worker1")
    result = verdict(b)
    assert result.valid is True and result.details["excused"] == 1


def test_another_worker_frozen_or_an_app_process_stopped_does_not_excuse_it():
    b = run(9.1)
    b.fault("pause_service", 2.0, 8.0, details={"pid": 5000, "role": "worker"}, service="worker2")
    b.fault("stop_service", 0.5, 8.0, details={"pid": 6000, "role": "app"}, service="sweeper")
    assert verdict(b).valid is False


def test_a_database_fault_does_not_excuse_the_kill():
    b = run(9.1)
    b.fault("database_restart", 2.0, 3.0)
    assert verdict(b).valid is False


def test_a_freeze_healed_before_the_tasks_last_limit_seconds_does_not_excuse_it():
    b = run(20.0)
    b.fault("pause_service", 1.0, 5.0, details={"pid": 4000, "role": "worker"}, service="worker1")
    assert verdict(b).valid is False


def test_logs_that_show_no_task_received_are_no_evidence():
    b = run(received=0)
    assert verdict(b).valid == UNKNOWN
    assert "no task received" in verdict(b).message
    assert soft_limit_honoured not in applicable(b.history(), b.snapshot())


def test_without_the_logs_read_it_is_unknown_and_not_switched_on():
    b = run(logs_read=False)
    assert verdict(b).valid == UNKNOWN
    assert soft_limit_honoured not in applicable(b.history(), b.snapshot())
    assert soft_limit_honoured in applicable(run().history(), run().snapshot())
