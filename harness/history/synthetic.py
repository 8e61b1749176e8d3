"""Realistic synthetic runs, for benchmarks, report previews and checker tests.

``synthetic_run(jobs=20, seed=0, bugs=())`` builds the history and the final
snapshot of a run where jobs are submitted, run one or two paid steps, and
sometimes meet a provider error, a hanging call or a killed worker (whose
retry reuses the idempotency key, as a correct app does). ``bugs`` plants
known defects, each in one job: ``"double_billing"`` (the retry sends a new
key), ``"stuck"`` (a job left running), ``"lost"`` (an accepted job with no
row), ``"mislabelled"`` (a hang reported as a provider error),
``"dead_write"`` (a dead attempt's write accepted). Same seed, same run.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Iterable

from harness.history import vocabulary as v
from harness.history.event import FAIL, INFO, INVOKE, OK, Event
from harness.history.history import History
from harness.history.snapshot import JobRow, Snapshot

__all__ = ["BUGS", "DEADLINE", "START_T", "STEPS", "WALL_OFFSET", "synthetic_run"]

START_T = 5000.0  # a plausible monotonic clock reading
WALL_OFFSET = 1_700_000_000.0 - START_T
STEPS = ("transcribe", "summarize")
DEADLINE = 0.35  # seconds: the paid-call deadline at this run's time scale
BUGS = ("double_billing", "stuck", "lost", "mislabelled", "dead_write")


@dataclass
class _Run:
    rng: random.Random
    events: list[Event] = field(default_factory=list)
    rows: list[JobRow] = field(default_factory=list)
    calls: int = 0

    def add(self, t: float, source: str, type: str, name: str, job: str | None = None,
            attempt: int | None = None, /, **data: Any) -> None:
        self.events.append(Event(len(self.events), t, t + WALL_OFFSET, source, type, name,
                                 job, attempt, data))

    def state(self, t: float, job: str, state: str, attempt: int | None, reason: str | None = None) -> None:
        self.add(t, v.JOB, OK, v.STATE, job, attempt, state=state, reason=reason, attempt=attempt)

    def call(self, t: float, job: str, attempt: int, step: str, key: str | None, latency: float,
             outcome: str = OK, state: str = "done", billed: bool = True, **extra: Any) -> float:
        self.calls += 1
        call_id = f"c{self.calls}"
        common = {"call_id": call_id, "route": "/v1/generate", "step": step, "key": key, "mode": "normal"}
        self.add(t, v.PAIDAPI, INVOKE, v.CALL, job, attempt, **common)
        done = {"state": state, "billed": billed, "latency": latency, "delivered": outcome == OK,
                "client_gone": outcome == INFO, "status": extra.pop("status", 200), **extra}
        self.add(t + latency, v.PAIDAPI, outcome, v.CALL, job, attempt, **common, **done)
        end = t + latency
        if outcome == OK and state == "done":  # the app saves what it was given, then goes on
            end += 0.0005
            self.add(end, v.WRITE, OK, v.STEP_SAVED, job, attempt,
                     step=step, table="step_results", call_id=call_id, attempt=attempt, refused=False)
        return end

    def latency(self) -> float:
        return min(self.rng.lognormvariate(-2.9, 0.6), DEADLINE * 0.9)


def _killed(run: _Run, job: str, attempt: int, now: float, step: str, key: str,
            bug: str | None) -> tuple[int, float]:
    """A worker killed during the call; the sweeper declares the attempt dead; a retry runs."""
    n = run.calls
    run.add(now + 0.05, v.WORKER, OK, v.WORKER_KILLED, job, attempt, worker="w1", pid=4100 + n, signal=9)
    run.call(now, job, attempt, step, key, run.latency() + 0.06, outcome=INFO, client_gone=True)
    dead_at = now + 0.12
    run.add(dead_at, v.JOB, OK, v.ATTEMPT_DEAD, job, attempt, attempt=attempt, by="sweeper")
    write_ok = bug == "dead_write"
    run.add(dead_at + 0.01, v.WRITE, OK if write_ok else FAIL, v.WRITE, job, attempt,
            attempt=attempt, table="results", refused=not write_ok)
    run.state(dead_at + 0.002, job, "queued", attempt + 1)
    now = dead_at + 0.03
    run.state(now, job, "running", attempt + 1)
    if bug == "double_billing":
        return attempt + 1, run.call(now, job, attempt + 1, step, f"{key}:retry", run.latency())
    first = f"c{run.calls}"
    return attempt + 1, run.call(now, job, attempt + 1, step, key, 0.002, state="replayed",
                                 billed=False, replay_of=first)


def _last_step(run: _Run, job: str, attempt: int, now: float, step: str, fate: str,
               bug: str | None) -> tuple[int, float, str, str | None]:
    """The job's last paid step, where its fate plays out: (attempt, now, state, reason)."""
    key = f"{job}:{step}"
    if fate == "killed":
        attempt, now = _killed(run, job, attempt, now, step, key, bug)
        return attempt, now, "done", None
    if fate == "provider_error":
        now = run.call(now, job, attempt, step, key, 0.02, outcome=FAIL, state="failed",
                       billed=False, status=500)
        return attempt, now, "failed", "provider_error: 500"
    if fate == "hang":
        run.call(now, job, attempt, step, key, DEADLINE * 2, outcome=INFO, state="hung", billed=False)
        return attempt, now + DEADLINE, "failed", "provider_error" if bug == "mislabelled" else "timeout"
    return attempt, run.call(now, job, attempt, step, key, run.latency()), "done", None


def _job(run: _Run, n: int, t: float, fate: str, bug: str | None) -> None:
    job = f"job-{n:05d}"
    run.add(t, v.SUBMIT, INVOKE, v.SUBMIT, None, None, project="demo", file=f"f{n}.wav")
    run.add(t + 0.004, v.SUBMIT, OK, v.SUBMIT, job, None, status=202, job_id=job)
    run.state(t + 0.003, job, "queued", 1)
    attempt, now = 1, t + 0.01 + run.rng.random() * 0.05
    run.state(now, job, "running", attempt)
    steps = STEPS if n % 3 else STEPS[:1]
    for step in steps[:-1]:
        now = run.call(now, job, attempt, step, f"{job}:{step}", run.latency())
    attempt, now, state, reason = _last_step(run, job, attempt, now, steps[-1], fate, bug)
    run.add(now + 0.001, v.WRITE, OK, v.WRITE, job, attempt, attempt=attempt, table="results", refused=False)
    if bug == "stuck":
        state, reason = "running", None
    else:
        run.state(now + 0.003, job, state, attempt, reason)
        run.add(now + 0.005, v.EVENT, OK, v.STATUS, job, attempt, state=state)
    if bug != "lost":
        run.rows.append(JobRow(job, state, reason, attempt, heartbeat_at=now + WALL_OFFSET,
                               updated_at=now + 0.003 + WALL_OFFSET, created_at=t + WALL_OFFSET))


_FATES: tuple[tuple[str, float], ...] = (("normal", 0.75), ("provider_error", 0.08), ("hang", 0.07), ("killed", 0.10))
_BUG_FATE = {"double_billing": "killed", "dead_write": "killed", "mislabelled": "hang"}


def _fates(rng: random.Random, jobs: int, bugs: Iterable[str]) -> list[tuple[str, str | None]]:
    names, weights = zip(*_FATES)
    fates: list[tuple[str, str | None]] = [(rng.choices(names, weights)[0], None) for _ in range(jobs)]
    for i, bug in enumerate(bugs):
        if bug not in BUGS:
            raise ValueError(f"unknown bug {bug!r}; known: {', '.join(BUGS)}")
        slot = (i * 7 + 3) % jobs  # spread the planted bugs over the run, one job each
        fates[slot] = (_BUG_FATE.get(bug, "normal"), bug)
    return fates


def _background(run: _Run, end: float) -> None:
    """Worker lifecycle, a fault window, a failpoint trigger, a sweep, budgets, queries."""
    run.add(START_T - 0.4, v.WORKER, OK, v.WORKER_START, worker="w1", pid=4000, signal=None)
    run.add(START_T - 0.1, v.WORKER, OK, v.WORKER_READY, worker="w1", pid=4000, signal=None)
    for task, soft, hard in (("pipeline.transcribe", 3.0, 3.6), ("pipeline.summarize", 1.2, 1.5)):
        run.add(START_T - 0.05, v.BUDGET, OK, v.DECLARED, task=task, soft=soft, hard=hard)
        run.add(START_T - 0.02, v.BUDGET, OK, v.EFFECTIVE, task=task, soft=soft, hard=hard)
    lo, hi = START_T + (end - START_T) * 0.3, START_T + (end - START_T) * 0.45
    params = {"toxic": "latency", "latency_ms": 200}
    for t, type_ in ((lo, INVOKE), (lo + 0.002, OK)):
        run.add(t, v.FAULT, type_, v.INJECT, fault="paidapi_latency", params=params)
    for t, type_ in ((hi, INVOKE), (hi + 0.002, OK)):
        run.add(t, v.FAULT, type_, v.HEAL, fault="paidapi_latency", params=params)
    run.add((lo + hi) / 2, v.FAILPOINT, OK, "submit.after_job_write", "job-00001", None,
            action="sleep", pid=4000, context={"job_id": "job-00001"}, hit=1)
    rows = [f"r{i}" for i in range(6)]
    run.add(end - 0.2, v.SWEEP, OK, v.SWEEP, run_id="sweep-1", eligible=rows, processed=rows[:-1],
            failed=rows[-1:], summary={"processed": 5, "failed": 1}, state="done")
    run.add(end - 0.1, v.QUERY, OK, v.SCAN, table="jobs", scans=1, items=40)


def synthetic_run(jobs: int = 20, seed: int = 0, bugs: Iterable[str] = ()) -> tuple[History, Snapshot]:
    """A seeded run of ``jobs`` jobs with the given planted bugs: its history and final snapshot."""
    rng = random.Random(seed)
    run = _Run(rng)
    t = START_T
    for n, (fate, bug) in enumerate(_fates(rng, jobs, list(bugs))):
        t += rng.expovariate(jobs / 2.0)  # about two seconds of submissions, whatever the count
        _job(run, n, t, fate, bug)
    end = max(e.t for e in run.events) + 0.3
    _background(run, end)
    snapshot = Snapshot(jobs=tuple(run.rows), taken_at_wall=end + WALL_OFFSET)
    return History(run.events), snapshot
