"""Invariant: recovery within a bound, and no capacity lost.

Once a fault heals, the system must be back to normal within a bound, not
merely finish its jobs some time before the verdict: a consumer slot, a
worker thread or a pool connection that a fault took and nothing gave back
is capacity lost for good, and no per-job invariant sees it while the jobs
that remain still trickle through (or are rescued by the heal itself).

Evidence: the faults' own ``inject`` / ``heal`` events, the submissions and
the job state log, and bounds the scenario (or the nightly) declares with
``jq.expect(job_bound=seconds, recovery_bound=seconds)``:

* **a probe**: a job accepted after the last heal of every fault runs on a
  system that is healed; it must reach a terminal state within
  ``job_bound`` of its acceptance (with ``probe_state="done"`` declared,
  that state: a healed system that fails every new job has not
  recovered), and no submission after the last heal may be refused by a
  server error (5xx or no answer at all);
* **per fault** (when ``recovery_bound`` is declared): every job alive
  while a fault was in place (accepted before its heal, not terminal
  before its injection) reaches a terminal state within ``recovery_bound``
  after the last heal of the faults its life overlapped (faults overlap in
  a nightly run: each delays the recovery from the others). Each fault's
  recovery time (the last of its jobs' ends minus its heal, as the nightly
  report lists it) is in the result's details.

``unknown`` without a declared ``job_bound``, without a healed fault, or
with neither a probe job after the last heal nor a ``recovery_bound``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.checks.submissions import accepted
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, Snapshot
from harness.history import vocabulary as v
from harness.history.event import FAIL, INFO, OK, Event
from harness.history.history import History

NAME = "recovers_within_bound"
JOB_BOUND, RECOVERY_BOUND, PROBE_STATE = "job_bound", "recovery_bound", "probe_state"


@dataclass(frozen=True)
class Window:
    """One fault, from its injection to its heal (monotonic seconds)."""

    fault: str
    injected: float
    healed: float


def _declared_text(history: History, what: str) -> Any:
    values = [e.data[what] for e in history.by_source(v.HARNESS, name=v.EXPECT) if e.data.get(what) is not None]
    return values[-1] if values else None


def declared(history: History, what: str) -> float | None:
    """The last value the scenario declared for ``what`` (``jq.expect(job_bound=...)``), None if none."""
    value = _declared_text(history, what)
    return None if value is None else float(value)


def windows(history: History) -> list[Window]:
    """Every fault injected and healed, paired in order by fault and parameters."""
    open_: dict[tuple[str, str], list[Event]] = {}
    found = []
    for event in history.by_source(v.FAULT):
        if event.type != OK:
            continue
        key = (str(event.data.get("fault")), repr(event.data.get("params")))
        if event.name == v.INJECT:
            open_.setdefault(key, []).append(event)
        elif event.name == v.HEAL and open_.get(key):
            injected = open_[key].pop(0)
            found.append(Window(key[0], injected.t, event.t))
    return found


def _bounds_and_faults(history: History, snapshot: Snapshot | None) -> Missing | None:
    if declared(history, JOB_BOUND) is None:
        return Missing("no job bound was declared (jq.expect(job_bound=seconds))")
    healed = windows(history)
    if not healed:
        return Missing("no fault was injected and healed: nothing to recover from")
    last = max(w.healed for w in healed)
    if declared(history, RECOVERY_BOUND) is None and not any(
            e.t > last for e in history.by_source(v.SUBMIT, name=v.SUBMIT) if e.type != "invoke"):
        return Missing("no job was submitted after the last heal (a probe) and no recovery_bound was declared")
    return None


BOUNDS = Need("recovery", "healed faults, a declared job bound, and a probe job after the last heal "
              "or a declared recovery bound", _bounds_and_faults)


def _final(history: History, terminal: tuple[str, ...]) -> dict[str, Event]:
    """Each job's first terminal state change."""
    found: dict[str, Event] = {}
    for event in history.by_source(v.JOB, name=v.STATE):
        if event.job_id is not None and event.data.get("state") in terminal:
            found.setdefault(event.job_id, event)
    return found


def _job_of(event: Event) -> str | None:
    job_id = event.job_id or event.data.get("job_id")
    return None if job_id is None else str(job_id)


def _server_refused(event: Event) -> bool:
    status = event.data.get("status")
    return event.type == INFO or (event.type == FAIL and (status is None or int(status) >= 500))


def _probes(history: History, after: float, bound: float, final: dict[str, Event],
            healthy: str | None) -> list[dict[str, Any]]:
    found = []
    for answer in history.by_source(v.SUBMIT, name=v.SUBMIT):
        if answer.t <= after:
            continue
        if accepted(answer) and _job_of(answer) is not None:
            end = final.get(str(_job_of(answer)))
            base = {"job_id": _job_of(answer), "accepted_at": history.relative(answer.t), "job_bound": bound,
                    "after_last_heal_s": round(answer.t - after, 3)}
            if end is None or end.t - answer.t > bound:
                found.append({"kind": "probe too slow", **base,
                              "took_s": None if end is None else round(end.t - answer.t, 3)})
            elif healthy is not None and end.data.get("state") != healthy:
                found.append({"kind": "probe failed", **base, "state": end.data.get("state"),
                              "reason": end.data.get("reason"), "healthy_state": healthy})
        elif _server_refused(answer):
            found.append({"kind": "refused after the last heal", "at": history.relative(answer.t),
                          "answer": answer.data.get("status") or answer.data.get("error")})
    return found


def _accepted(history: History) -> dict[str, float]:
    """When each job was accepted (its first accepted submission)."""
    starts: dict[str, float] = {}
    for e in history.by_source(v.SUBMIT, name=v.SUBMIT):
        if accepted(e) and _job_of(e):
            starts.setdefault(str(_job_of(e)), e.t)
    return starts


def _caught(window: Window, start: float, end: float | None) -> bool:
    """A job accepted at ``start`` and ended at ``end`` (None: never) was alive while ``window`` was in place."""
    return start <= window.healed and (end is None or end >= window.injected)


def per_fault(history: History, window: Window, ends: dict[str, float]) -> dict[str, Any]:
    """The jobs a fault caught, and how long after its heal the last of them ended (None: one never did)."""
    starts = _accepted(history)
    hit = [j for j, t in starts.items() if _caught(window, t, ends.get(j))]
    unfinished = [j for j in hit if j not in ends]
    last = max((ends[j] for j in hit if j in ends), default=window.healed)
    return {"fault": window.fault, "injected_at": history.relative(window.injected),
            "healed_at": history.relative(window.healed), "jobs_affected": len(hit), "unfinished": unfinished,
            "recovery_s": None if unfinished else round(max(0.0, last - window.healed), 3)}


@invariant(NAME, needs=(BOUNDS,))
def recovers_within_bound(history: History, snapshot: Snapshot | None) -> Result:
    """After every fault heals, jobs finish within the declared bounds again: no capacity was lost."""
    terminal = tuple(snapshot.terminal_states if snapshot else DEFAULT_TERMINAL_STATES)
    final = _final(history, terminal)
    ends = {job_id: event.t for job_id, event in final.items()}
    healed = windows(history)
    last = max(w.healed for w in healed)
    job_bound, recovery_bound = declared(history, JOB_BOUND), declared(history, RECOVERY_BOUND)
    healthy = _declared_text(history, PROBE_STATE)
    violations = _probes(history, last, job_bound, final, healthy)
    faults = [per_fault(history, w, ends) for w in healed]
    if recovery_bound is not None:
        violations += _slow(history, healed, ends, recovery_bound)
    if violations:
        return invalid_result(NAME, f"{len(violations)} sign(s) the system did not recover; first: "
                              f"{_describe(violations[0])}", violations, faults=faults)
    probes = sum(1 for e in history.by_source(v.SUBMIT, name=v.SUBMIT) if e.t > last and accepted(e))
    if not probes and not any(f["jobs_affected"] for f in faults):
        return unknown_result(NAME, "no job was accepted after the last heal and no job was caught by a fault",
                              faults=faults)
    return valid_result(NAME, f"{probes} job(s) accepted after the last heal each ended within {job_bound:g}s; "
                        f"{len(faults)} fault(s) recovered from", probes=probes, faults=faults)


def _slow(history: History, healed: list[Window], ends: dict[str, float], bound: float) -> list[dict[str, Any]]:
    """Jobs a fault caught that ended later than ``bound`` after the last heal of the faults they met."""
    found = []
    for job_id, start in _accepted(history).items():
        met = [w for w in healed if _caught(w, start, ends.get(job_id))]
        if not met:
            continue
        last = max(met, key=lambda w: w.healed)
        end = ends.get(job_id)
        if end is None or end - last.healed > bound:
            found.append({"kind": "slow recovery", "job_id": job_id, "fault": last.fault,
                          "healed_at": history.relative(last.healed), "recovery_bound": bound,
                          "recovery_s": None if end is None else round(end - last.healed, 3)})
    return sorted(found, key=lambda f: f["healed_at"])


def _describe(f: dict[str, Any]) -> str:
    if f["kind"] == "probe too slow":
        took = "never ended" if f["took_s"] is None else f"took {f['took_s']:g}s"
        return (f"job {f['job_id']}, accepted {f['after_last_heal_s']:g}s after the last heal, {took} "
                f"(job bound {f['job_bound']:g}s)")
    if f["kind"] == "slow recovery":
        took = "never ended" if f["recovery_s"] is None else f"ended {f['recovery_s']:g}s after it"
        return (f"job {f['job_id']}, caught by {f['fault']} (healed at {f['healed_at']:.3f}s), {took} "
                f"(recovery bound {f['recovery_bound']:g}s)")
    if f["kind"] == "probe failed":
        return (f"job {f['job_id']}, accepted {f['after_last_heal_s']:g}s after the last heal, ended "
                f"{f['state']!r} ({f['reason']}), not {f['healthy_state']!r}")
    return f"a submission at {f['at']:.3f}s, after the last heal, was answered {f['answer']!r}"
