"""Nightly progress and the continuous check's invariant, without services."""
from __future__ import annotations

import io

from harness.history.event import Event
from harness.history.history import History
from harness.nightly.checks import no_job_stuck
from harness.nightly.monitor import Status
from harness.nightly.progress import PlainProgress, progress_for


def status(t: float, **kw) -> Status:
    return Status(elapsed=t, submitted=int(t * 5), done=int(t * 4), in_flight=3, **kw)


def test_plain_lines_when_not_a_tty_every_period_and_at_the_end():
    out = io.StringIO()
    progress = progress_for(60, out=out)
    assert isinstance(progress, PlainProgress)
    for t in range(0, 31):
        progress(status(float(t), faults_injected=2, faults_active=1))
    progress.close(status(31.0, stuck=1, duplicate_calls=2))
    lines = out.getvalue().splitlines()
    assert len(lines) == 5  # at 0, 10, 20, 30 s and the final one
    assert lines[1].startswith("[   10s / 60s, 50s left] jobs 50 submitted, 40 done, 0 failed, 3 in flight, 0 stuck")
    assert "faults 2 injected, 1 active | invariants ok so far | duplicate spend 0" in lines[1]
    assert "invariants 1 stuck, 2 billed twice | duplicate spend 2" in lines[-1]


def _event(i: int, name: str, type_: str = "ok", job_id: str | None = None, **data) -> Event:
    return Event(index=i, t=float(i), wall=1000.0 + i, source="nightly", type=type_, name=name,
                 job_id=job_id, attempt=None, data=data)


def test_no_job_stuck_is_unknown_without_a_single_look_at_the_table():
    assert no_job_stuck(History([]), None).valid == "unknown"


def test_no_job_stuck_is_valid_with_looks_and_no_stuck_job():
    assert no_job_stuck(History([_event(0, "tick"), _event(1, "tick")]), None).valid is True


def test_a_stuck_job_is_the_counterexample():
    history = History([_event(0, "tick"), _event(1, "stuck", "fail", "job-9", state="queued", found_at=31.0,
                                                  since=10.0, bound=20.0)])
    result = no_job_stuck(history, None)
    assert result.valid is False and result.job_id == "job-9"
    assert "stuck past the 20 s bound" in result.message and "'queued'" in result.message


def test_a_job_is_overtaken_when_a_job_accepted_after_it_completed():
    from harness.nightly.monitor import Monitor

    monitor = Monitor(run=None, workload=None, nemesis=None, job_bound=20.0)
    monitor.completed = {"b": 9.0, "d": 4.0}  # a and c still pending: c behind a backlog, a lost
    since = monitor._overtaken_since(["a", "b", "c", "d"])
    assert since == {"a": 4.0, "b": 4.0, "c": 4.0, "d": float("inf")}
    monitor.completed = {"a": 3.0}
    assert monitor._overtaken_since(["a", "b", "c"]) == {"a": float("inf"), "b": float("inf"),
                                                          "c": float("inf")}


def test_done_counts_the_apps_success_state_the_first_of_its_terminal_states():
    from types import SimpleNamespace

    from harness.nightly.monitor import Monitor

    run = SimpleNamespace(jobs=SimpleNamespace(terminal_states=("summarised", "failed", "needs_agent")))
    workload = SimpleNamespace(accepted_at=lambda: {})
    nemesis = SimpleNamespace(started=0.0, bound_start=lambda: (False, 0.0))
    status = Status()
    Monitor(run=run, workload=workload, nemesis=nemesis, job_bound=20.0)._judge(
        {"summarised": 7, "failed": 2, "needs_agent": 1, "summarising": 3}, {}, status)
    assert (status.done, status.failed) == (7, 3)
