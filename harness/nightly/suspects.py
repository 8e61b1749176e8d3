"""Which faults of a failed run to suspect first: those active while a counterexample's job lived.

A failed invariant names jobs (``Result.counterexample``); the history says
when each of them lived (its first and last event); the nemesis windows say
when each fault was active as played (a defence switched off counts until it
actually returned, held past its planned heal while its jobs were judged).
A fault whose window overlaps a counterexample job's lifetime is a suspect;
the nearest first (the smallest gap between the fault's injection and the
job's first event), so that shrinking tries the likeliest cause alone before
the rest. A fault that never landed is no suspect: it changed nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from harness.history.history import History

Lifetime = tuple[float, float]  # run seconds: the job's first and last event


@dataclass(frozen=True)
class Suspect:
    """Fault ``index`` of the schedule, active while ``job_id`` lived, ``gap`` s from the job's start."""

    index: int
    job_id: str
    gap: float
    why: str


def counterexample_jobs(results: Iterable[Any]) -> list[str]:
    """The jobs the results' counterexamples name, in order, each once (violations when no counterexample)."""
    jobs: list[str] = []
    for result in results:
        items = list(result.counterexample) or list(result.details.get("violations") or [])
        for item in items:
            job = item.get("job_id") if isinstance(item, Mapping) else None
            if job is not None and str(job) not in jobs:
                jobs.append(str(job))
    return jobs


def lifetimes(history: History, jobs: Iterable[str], started: float) -> dict[str, Lifetime]:
    """Each job's lifetime in run seconds (``started``: the run's monotonic start); jobs never seen left out.

    A stuck job's last event is the monitor's report of it, so its lifetime
    runs until it was found stuck.
    """
    spans: dict[str, Lifetime] = {}
    for job in jobs:
        events = history.by_job(job)
        if events:
            spans[job] = (round(events[0].t - started, 3), round(events[-1].t - started, 3))
    return spans


def suspects(windows: Iterable[Any], spans: Mapping[str, Lifetime], run_end: float) -> list[Suspect]:
    """The faults whose played window overlaps a job's lifetime, nearest first, each fault once.

    ``windows``: the nemesis's (``index``, ``injected_at``, ``healed_at``, ``planned``); a fault
    still active when the run ended counts until ``run_end``.
    """
    found: dict[int, Suspect] = {}
    for window in windows:
        if window.injected_at is None:
            continue  # never landed
        begin, end = window.injected_at, window.healed_at if window.healed_at is not None else run_end
        for job, (first, last) in spans.items():
            if begin > last or end < first:
                continue
            gap = round(abs(begin - first), 3)
            held = "" if window.planned.extends_bound else ", a defence held off"
            why = (f"{window.planned.label()} active {begin:g}-{end:g} s{held}, while job {job} lived "
                   f"{first:g}-{last:g} s")
            if window.index not in found or gap < found[window.index].gap:
                found[window.index] = Suspect(window.index, job, gap, why)
    return sorted(found.values(), key=lambda s: (s.gap, s.index))


def suspects_of(outcome: Any, wanted: set[str]) -> list[Suspect]:
    """The suspects of a judged run (an ``Outcome``), from the failed invariants in ``wanted``."""
    failed = [r for r in outcome.verdict.results if r.valid is False and r.name in wanted]
    jobs = counterexample_jobs(failed)
    if not jobs:
        return []
    driven = outcome.driven
    spans = lifetimes(outcome.history, jobs, driven.started)
    return suspects(driven.windows, spans, run_end=driven.wall_s)
