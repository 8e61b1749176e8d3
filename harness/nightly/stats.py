"""Figures of a nightly run from its history: throughput and latency over time, per-fault effects.

Times are seconds since the run started (the fault windows' clock). A job
is accepted at its ``ok submit`` and completes at its first terminal state
in the job state log; its latency is the difference.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from harness.history import vocabulary as v
from harness.history.history import History


@dataclass(frozen=True)
class JobLife:
    job_id: str
    accepted: float
    completed: float | None
    retried: bool


def job_lives(history: History, started: float, terminal: Iterable[str]) -> list[JobLife]:
    """Every accepted job: when it was accepted, when it completed (None: never), whether it was retried."""
    terminal = set(terminal)
    accepted: dict[str, float] = {}
    for e in history.by_source(v.SUBMIT, v.SUBMIT, "ok"):
        if e.job_id is not None:
            accepted.setdefault(e.job_id, e.t - started)
    completed: dict[str, float] = {}
    retried: set[str] = set()
    for e in history.by_source(v.JOB):
        if e.job_id is None:
            continue
        if e.name == v.ATTEMPT_DEAD or (e.attempt or 0) > 1:
            retried.add(e.job_id)
        if e.data.get("state") in terminal:
            completed.setdefault(e.job_id, e.t - started)
    return [JobLife(j, a, completed.get(j), j in retried) for j, a in accepted.items()]


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def series(lives: list[JobLife], span: float, buckets: int = 60) -> list[dict[str, Any]]:
    """Per time bucket: completions per second, p50 and p99 latency of the jobs completed in it."""
    width = max(1.0, span / buckets)
    rows = []
    for i in range(max(1, math.ceil(span / width))):
        lo, hi = i * width, (i + 1) * width
        done = [life.completed - life.accepted for life in lives
                if life.completed is not None and lo <= life.completed < hi]
        rows.append({"t": round(lo, 2), "width": round(width, 2), "throughput": round(len(done) / width, 3),
                     "p50": percentile(done, 50), "p99": percentile(done, 99)})
    return rows


def fault_effects(window: dict[str, Any], lives: list[JobLife], history: History, started: float) -> dict[str, Any]:
    """Injected, landed, jobs affected (in flight during the fault), recovery time after the heal."""
    start, end = window.get("injected_at"), window.get("healed_at")
    if start is None:
        return {"injected": False, "landed": False, "jobs_affected": 0, "retried": 0, "recovery_s": None}
    end = end if end is not None else max((life.completed or 0.0) for life in lives) if lives else start
    hit = [life for life in lives if life.accepted <= end and (life.completed is None or life.completed >= start)]
    unfinished = any(life.completed is None for life in hit)
    last = max((life.completed for life in hit if life.completed is not None), default=end)
    return {"injected": True, "landed": _landed(window, history, started, start, end),
            "jobs_affected": len(hit), "retried": sum(life.retried for life in hit),
            "recovery_s": None if unfinished else round(max(0.0, last - end), 2)}


def _landed(window: dict[str, Any], history: History, started: float, start: float, end: float) -> bool:
    """The fault's own ``ok inject`` event (for a deferred kill: the moment it fired) is in the window."""
    name = window["spec"]["fault"]
    for e in history.by_source(v.FAULT, v.INJECT, "ok"):
        if e.data.get("fault") == name and e.data.get("params") == window.get("params") and \
                start - 0.01 <= e.t - started <= end + 0.01:
            return True
    return False
