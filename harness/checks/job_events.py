"""One job's events together with the faults and worker deaths that hit it.

``History.by_job`` holds the events recorded with the job's id. A fault is
usually recorded without one: a kill names a worker, not the job its pool
child was running. For a counterexample that is the missing half of the
story ("the job stopped at call #1" without "worker2 was SIGKILLed while
holding call #1"), so this module pulls them in from the evidence that ties
a process to the job:

- the processes that ran the job: the pids of its task runs (instrumentation
  events) and of its paid calls (the ledger's ``caller_pid``);
- a ``fault`` event whose data names the job, or whose process tree
  (``tree``, else ``pid``) holds one of those processes, from the job's
  first event on; the processes of that tree then count as the job's too,
  so the pool's own ``worker`` event for the same kill is pulled in as well;
- a ``worker`` event whose data names the job, or whose ``pid`` is one of
  the job's processes, from the job's first event on.

Events before the job's first event (the worker's start) are left out.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from harness.checks.paid_calls import PaidCall
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

__all__ = ["fault_pids", "held_calls", "job_events", "job_pids"]

_PID_KEYS = {v.INSTRUMENT: "pid", v.PAIDAPI: "caller_pid"}  # where a job's events name the process running it


def fault_pids(data: Mapping[str, Any]) -> set[int]:
    """The processes a fault or worker event acted on: its ``tree``, else its ``pid``."""
    tree = data.get("tree") or ([data["pid"]] if data.get("pid") is not None else [])
    return {int(pid) for pid in tree}


def job_pids(history: History, job_id: str) -> set[int]:
    """The processes seen running ``job_id``: its task runs' pids and its paid calls' callers."""
    pids = set()
    for event in history.by_job(job_id):
        pid = event.data.get(_PID_KEYS.get(event.source, ""))
        if pid is not None:
            pids.add(int(pid))
    return pids


def held_calls(calls: Iterable[PaidCall], pids: set[int], at: float) -> list[PaidCall]:
    """The calls made by one of ``pids`` that were in flight at ``at``."""
    return [c for c in calls if c.caller_pid in pids and c.t_start <= at
            and (c.t_end is None or c.t_end >= at)]


def job_events(history: History, job_id: str) -> tuple[Event, ...]:
    """The job's own events and the fault / worker events that hit it, in history order."""
    own = history.by_job(job_id)
    if not own:
        return own
    first, pids = own[0].t, job_pids(history, job_id)
    faults = _hitting(history.by_source(v.FAULT), job_id, first, pids, fault_pids)
    for event in (*faults, *(e for e in own if e.source == v.FAULT)):
        pids |= fault_pids(event.data)  # the tree's main process: the pool's own event of the same kill
    workers = _hitting(history.by_source(v.WORKER), job_id, first, pids, _pid_of)
    if not faults and not workers:
        return own
    return tuple(sorted((*own, *faults, *workers), key=lambda e: (e.t, e.index)))


def _hitting(events: Iterable[Event], job_id: str, first: float, pids: set[int],
             acted_on: Callable[[Mapping[str, Any]], set[int]]) -> list[Event]:
    """The events from the job's first on that name it or acted on one of ``pids``."""
    return [e for e in events
            if e.job_id is None and e.t >= first  # with a job id, it is among its own job's events
            and (str(e.data.get("job_id")) == job_id or acted_on(e.data) & pids)]


def _pid_of(data: Mapping[str, Any]) -> set[int]:
    pid = data.get("pid")
    return {int(pid)} if pid is not None else set()
