"""recovers_within_bound: a probe job after the last heal that is slow or never runs, a slow recovery, are found."""
from __future__ import annotations

from harness.checks import CHECKERS, UNKNOWN, run_checks
from harness.checks.recovery import recovers_within_bound
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder


def job(b: HistoryBuilder, job_id: str, accepted: float, ended: float | None, status: int = 202) -> None:
    b.submit(job_id, accepted - 0.001, status=status)
    if ended is not None:
        b.state(job_id, ended, "done", attempt=1)


def hung_then_probe(probe_ends: float | None, caught_ends: float | None = 4.0, bounds: bool = True) -> HistoryBuilder:
    """A job caught by a hang from 1 s to 5 s; a probe accepted at 6 s, after the heal."""
    b = HistoryBuilder()
    if bounds:
        b.event(v.HARNESS, "ok", v.EXPECT, 0.0, job_bound=3.0, recovery_bound=2.0)
    job(b, "caught", 0.5, caught_ends)
    b.fault("failpoint", 1.0, 5.0, at="task.before_paid_call")
    job(b, "probe", 6.0, probe_ends)
    return b


def judge(b: HistoryBuilder):
    return run_checks([recovers_within_bound], b.history(), b.snapshot())["recovers_within_bound"]


def test_a_probe_within_the_job_bound_and_a_prompt_recovery_are_valid():
    result = judge(hung_then_probe(probe_ends=7.0))
    assert result.valid is True
    assert result.details["faults"] == [{"fault": "failpoint", "injected_at": 1.0, "healed_at": 5.0,
                                         "jobs_affected": 1, "unfinished": [], "recovery_s": 0.0}]


def test_a_probe_that_never_ends_is_a_violation():
    result = judge(hung_then_probe(probe_ends=None))
    assert result.valid is False
    assert result.counterexample == [{"kind": "probe too slow", "job_id": "probe", "accepted_at": 6.0,
                                      "took_s": None, "job_bound": 3.0, "after_last_heal_s": 1.0}]
    assert "job probe, accepted 1s after the last heal, never ended (job bound 3s)" in result.message


def test_a_probe_slower_than_the_bound_or_refused_after_the_heal_is_a_violation():
    assert judge(hung_then_probe(probe_ends=9.5)).counterexample[0]["took_s"] == 3.5
    b = hung_then_probe(probe_ends=7.0)
    job(b, "late", 8.0, None, status=503)
    assert judge(b).counterexample[0]["kind"] == "refused after the last heal"


def test_a_caught_job_that_ends_long_after_the_heal_is_a_slow_recovery():
    result = judge(hung_then_probe(probe_ends=7.0, caught_ends=8.0))
    assert result.valid is False
    assert result.counterexample[0]["kind"] == "slow recovery"
    assert result.counterexample[0]["recovery_s"] == 3.0


def test_without_bounds_faults_or_a_probe_it_is_unknown():
    assert "no job bound was declared" in judge(hung_then_probe(probe_ends=7.0, bounds=False)).message
    no_fault = HistoryBuilder()
    no_fault.event(v.HARNESS, "ok", v.EXPECT, 0.0, job_bound=3.0)
    job(no_fault, "j", 1.0, 2.0)
    assert "nothing to recover from" in judge(no_fault).message
    no_probe = HistoryBuilder()
    no_probe.event(v.HARNESS, "ok", v.EXPECT, 0.0, job_bound=3.0)
    job(no_probe, "j", 0.5, 2.0)
    no_probe.fault("failpoint", 1.0, 5.0, at="x")
    assert judge(no_probe).valid == UNKNOWN


def test_it_is_shipped_by_name():
    assert CHECKERS["recovers_within_bound"] is recovers_within_bound


def test_a_job_caught_by_overlapping_faults_is_judged_from_the_last_heal_it_met():
    alone = hung_then_probe(probe_ends=7.0, caught_ends=21.0)  # 16 s after the hang healed at 5 s: slow
    assert judge(alone).counterexample[0]["job_id"] == "caught"
    overlapped = hung_then_probe(probe_ends=7.0, caught_ends=21.0)
    overlapped.fault("broker_outage", 4.0, 20.0)  # but the broker was out until 20 s: 1 s after that heal
    job(overlapped, "after", 22.0, 23.0)  # the probe after the last heal
    assert judge(overlapped).valid is True


def test_a_probe_that_ends_in_another_state_than_the_declared_healthy_one_is_a_violation():
    b = hung_then_probe(probe_ends=None)
    b.state("probe", 7.0, "needs_human", attempt=3, reason="needs a person: 3 attempts started and none finished")
    assert judge(b).valid is True  # no healthy state declared: any terminal state in time
    b.event(v.HARNESS, "ok", v.EXPECT, 7.5, probe_state="done")
    result = judge(b)
    assert result.valid is False
    assert result.counterexample[0]["kind"] == "probe failed"
    assert "ended 'needs_human' (needs a person: 3 attempts started and none finished), not 'done'" in result.message
