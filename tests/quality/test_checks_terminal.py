"""every_job_terminal: stuck jobs are found and described; finished runs pass."""
from __future__ import annotations

from harness.checks import UNKNOWN, every_job_terminal
from harness.history.builder import HistoryBuilder


def finished_run() -> HistoryBuilder:
    b = HistoryBuilder()
    for n, state in enumerate(("done", "failed", "needs_human")):
        job = f"j{n}"
        b.submit(job, 0.1 * n)
        b.state(job, 0.1 * n + 0.01, "running", attempt=1)
        b.state(job, 0.1 * n + 0.05, state, attempt=1)
        b.row(job, state, updated=0.1 * n + 0.05)
    return b


def test_all_terminal_is_valid():
    b = finished_run()
    result = every_job_terminal(b.history(), b.snapshot())
    assert result.valid is True
    assert "all 3 jobs" in result.message


def test_stuck_job_is_reported_with_age_heartbeat_and_attempts():
    b = finished_run()
    b.state("stuck", 1.0, "running", attempt=1)
    b.state("stuck", 2.0, "running", attempt=2)
    b.row("stuck", "running", attempt=2, updated=2.0, heartbeat=2.5, created=0.9)
    result = every_job_terminal(b.history(), b.snapshot(taken_at=10.0))
    assert result.valid is False
    [stuck] = result.counterexample
    assert stuck["job_id"] == "stuck" and stuck["state"] == "running"
    assert stuck["age_s"] == 8.0 and stuck["heartbeat_age_s"] == 7.5
    assert stuck["attempts"] == 2
    assert "job stuck stuck in 'running' (last update 8.0s ago, last heartbeat 7.5s ago, 2 attempt(s))" \
        in result.message


def test_a_row_no_attempt_claimed_yet_counts_no_attempt():
    """An attempt column that starts at 0: the row's insert is not an attempt (a job lost before any
    worker claimed it is stuck after 0 attempts, one claimed once after 1)."""
    b = finished_run()
    b.state("lost", 1.0, "pending", attempt=0)
    b.state("lost", 2.0, "processing", attempt=1)
    b.row("lost", "processing", attempt=1, updated=2.0, created=0.9)
    [stuck] = every_job_terminal(b.history(), b.snapshot(taken_at=10.0)).counterexample
    assert stuck["attempts"] == 1


def test_oldest_stuck_job_is_the_counterexample_and_all_are_listed():
    b = HistoryBuilder()
    b.row("young", "queued", created=5.0, updated=5.0)
    b.row("old", "running", created=1.0, updated=1.0)
    result = every_job_terminal(b.history(), b.snapshot(taken_at=6.0))
    assert result.counterexample[0]["job_id"] == "old"
    assert [v["job_id"] for v in result.details["violations"]] == ["old", "young"]
    assert result.message.startswith("2 of 2 jobs")


def test_terminal_states_are_configurable():
    b = HistoryBuilder()
    b.row("j1", "cancelled")
    assert every_job_terminal(b.history(), b.snapshot()).valid is False
    assert every_job_terminal(b.history(), b.snapshot(), terminal_states=("cancelled",)).valid is True


def test_missing_snapshot_is_unknown_and_empty_run_is_valid():
    b = HistoryBuilder()
    assert every_job_terminal(b.history(), None).valid == UNKNOWN
    assert every_job_terminal(b.history(), b.snapshot()).valid is True
