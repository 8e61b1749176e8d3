"""Invariant: every result a ``done`` job shows came from a paid call of that job and step.

One job's data reaching another is invisible in each job's own outcome: both
are ``done``, both have results. What tells it is where each result came
from. The app's saved step results (``write ok step_saved`` events with the
``call_id`` the provider answered with; the harness reads them after each
scenario where config names a ``results_query``) are compared with the
provider's ledger. A result of a ``done`` job must name a call that

* exists in the ledger and was answered (``done``, or ``replayed``),
* was made for that job (``X-Job-Id``) and, where both say, that step, and
* if it was a replay, replays a call of the same job: a replay of its own
  idempotency key, never of another job's.

Without saved results of any ``done`` job, or without the ledger, the
verdict is ``unknown``.
"""
from __future__ import annotations

from typing import Any

from harness.checks.needs import PAID_CALLS, Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.evidence import Snapshot
from harness.history import vocabulary as v
from harness.history.event import INVOKE, OK, Event
from harness.history.history import History

NAME = "results_have_provenance"
DONE = "done"
ANSWERED = ("done", "replayed")


def _final_states(history: History, snapshot: Snapshot | None) -> dict[str, str | None]:
    if snapshot is not None and snapshot.jobs:
        return {row.job_id: row.state for row in snapshot.jobs}
    last: dict[str, str | None] = {}
    for event in history.by_source(v.JOB, name=v.STATE):
        if event.job_id is not None:
            last[event.job_id] = event.data.get("state")
    return last


def _results_of_done_jobs(history: History, snapshot: Snapshot | None) -> list[Event]:
    states = _final_states(history, snapshot)
    return [e for e in history.by_source(v.WRITE, name=v.STEP_SAVED, type=OK)
            if e.job_id is not None and states.get(e.job_id) == DONE]


def _saved_results(history: History, snapshot: Snapshot | None) -> Missing | None:
    if _results_of_done_jobs(history, snapshot):
        return None
    saved = history.by_source(v.WRITE, name=v.STEP_SAVED)
    if saved:
        return Missing(f"{len(saved)} saved result(s), none of a job that ended done")
    return Missing("no saved step result was read (config results_query names where the app keeps them)")


SAVED_RESULTS = Need("saved_results", "the saved step results of jobs that ended done", _saved_results)


def _calls(history: History) -> dict[str, dict[str, Any]]:
    """Per call id: the call's job, step and key (from its invoke) and its outcome (completion)."""
    calls: dict[str, dict[str, Any]] = {}
    for event in history.by_source(v.PAIDAPI, name=v.CALL):
        call_id = str(event.data.get("call_id"))
        entry = calls.setdefault(call_id, {"call_id": call_id})
        entry.setdefault("job_id", event.job_id)
        for key in ("step", "key"):
            if event.data.get(key) is not None:
                entry.setdefault(key, event.data[key])
        if event.type != INVOKE:
            entry.update(state=event.data.get("state"), replay_of=event.data.get("replay_of"))
    return calls


def _why_not(saved: Event, calls: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """Why this saved result has no provenance in its own job (None: it has)."""
    call_id, step = saved.data.get("call_id"), saved.data.get("step")
    if call_id is None:
        return "the result names no paid call", {}
    call = calls.get(str(call_id))
    if call is None:
        return f"call {call_id} is not in the provider's ledger", {}
    if call.get("state") not in ANSWERED:
        return f"call {call_id} was never answered (ledger state {call.get('state')!r})", call
    if call.get("job_id") != saved.job_id:
        return f"call {call_id} was made for job {call.get('job_id')}", call
    if step is not None and call.get("step") is not None and str(call["step"]) != str(step):
        return f"call {call_id} was made for step {call['step']!r}", call
    original = calls.get(str(call.get("replay_of"))) if call.get("replay_of") is not None else None
    if original is not None and original.get("job_id") != saved.job_id:
        return (f"call {call_id} replays call {original['call_id']} of job {original.get('job_id')} "
                f"(idempotency key {original.get('key')!r})"), call
    return None


@invariant(NAME, needs=(SAVED_RESULTS, PAID_CALLS))
def results_have_provenance(history: History, snapshot: Snapshot | None) -> Result:
    """Each saved result of a done job comes from an answered call of that job and step."""
    results = _results_of_done_jobs(history, snapshot)
    calls = _calls(history)
    violations = []
    for saved in results:
        found = _why_not(saved, calls)
        if found is not None:
            why, call = found
            violations.append({"job_id": saved.job_id, "attempt": saved.attempt, "step": saved.data.get("step"),
                               "call_id": saved.data.get("call_id"), "why": why,
                               "call_job_id": call.get("job_id"), "at": history.relative(saved.t)})
    if violations:
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} result(s) of done jobs not from their own job's calls; "
                              f"first: job {f['job_id']} step {f['step']!r}: {f['why']}", violations,
                              judged=len(results))
    if not results:
        return unknown_result(NAME, "no saved result of a done job")
    jobs = len({e.job_id for e in results})
    return valid_result(NAME, f"{len(results)} result(s) of {jobs} done job(s), each from an answered call "
                        f"of its own job and step", judged=len(results), jobs=jobs)
