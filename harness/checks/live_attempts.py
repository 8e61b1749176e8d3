"""Invariant: a job is taken away from an attempt only once that attempt is dead or silent.

An app that retries work declares attempts dead: a sweeper re-queues a
job whose heartbeat went stale, a delivery claims a job whose owner
stopped beating. Fencing then makes the dead attempt harmless, which is
why the common bug here leaves no trace in the other invariants: a live
attempt declared dead is fenced out before it shows life again, so no two
attempts overlap and no late write lands. What the user sees is the
outcome: a healthy job started over, or handed to a person after "three
dead attempts" that were all working. This invariant reads the app's own
liveness evidence instead.

**Takeovers.** From the job state log: the row's attempt number grows
(another attempt claimed the job), or, where the app declares that every
state write of an attempt names it (``writes_name_attempt`` in config
``limits``; the attempt sets ``jobquake.attempt``), the job goes back to
its first state (re-queued) or to a terminal one by a write that is not
the owner's own (a sweeper's verdict on its behalf). A change the owner
wrote itself (it gave up at its own cap, it finished) is no takeover; an
app that does not declare it is judged on claims alone.

**Liveness.** From the heartbeat log (the state-log trigger copies every
move of config's ``job_heartbeat_column``; a claim that sets it is the
attempt's first beat) and the app's declared staleness threshold
(``heartbeat_stale`` in config ``limits``): the owner's last beat ``L``
before the takeover at ``T``. A takeover is invalid when

1. **the heartbeat was fresh**: ``T - L`` < the threshold. By the app's
   own rule the attempt was alive (a claim that ignores the heartbeat, a
   sweeper that judges by the start time); or
2. **the attempt was alive, could beat, and did not**: ``T - L`` >= the
   threshold, yet the attempt showed life after it had gone stale (a paid
   call started or answered, a write, a failpoint it reached, a change it
   wrote, at ``L + threshold`` or later), and nothing kept it from
   beating during the threshold before ``T``. Its heartbeat died while it
   worked (a heartbeat thread that stops at its first database error, a
   heartbeat that renews a queue message but not the job's row).

Excused, whatever the heartbeat says: the owner's process was killed,
stopped or frozen by a fault between ``L`` and ``T`` (its pid, from the
ledger's ``caller_pid``, in the fault's process tree; when the owner made
no paid call any worker or app process fault counts). Rule 1 is excused
when the heartbeat was stale by the wall clock the app judges with (the
statement's database time minus the beat's value): the wall clock was
stepped forward in between, so by the app's own rule it was stale. Rule 2 is also
excused when a fault that may cut an attempt off from where it beats (a
database restart, held connections, an emptied pool, a failpoint, an
infrastructure service paused, a network fault off the paid API's path)
was in force during the threshold before ``T``: the silence may be the
fault's, not the attempt's.

**Takeovers that keep the token** (every claim path, also one that never
raises the attempt number): where the heartbeat log names the process of
each beat, one attempt number beating from a second process is a change of
hands the state log cannot show (``harness.checks.kept_tokens``). It is
invalid when the taken attempt beat again afterwards (both own the job)
or its last beat before was fresh.

A takeover of an attempt that never beat is not judged. Attempts that beat
and kept their jobs to the end are the evidence of a run with no takeover
(valid); without heartbeats or a declared threshold the invariant is not
run (``unknown`` when asked for by name).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from harness.checks.end_to_end import declared_limits
from harness.checks.kept_tokens import judge_kept_token, kept_token_takeovers, log_order
from harness.checks.landed import windows
from harness.checks.liveness_faults import cuts_off, fired_pids, hits_owner, in_force
from harness.checks.needs import Missing, Need, read_count
from harness.checks.paid_calls import calls_by_job
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, Snapshot

NAME = "no_live_attempt_taken"
STALE = "heartbeat_stale"  # key of the app's declared limits
WRITER = "writer_attempt"
NAMES_WRITERS = "writes_name_attempt"  # key of the app's declared limits


def _beats(history: History) -> tuple[Event, ...]:
    return history.by_source(v.HEARTBEAT, name=v.BEAT)


def _heartbeats(history: History, snapshot: Snapshot | None) -> Missing | None:
    if _beats(history):
        return None
    if read_count(history, v.HEARTBEAT_SOURCE) is None:
        return Missing("the heartbeat log was not read (config names no job_heartbeat_column)")
    return Missing("no heartbeat was logged: the job table's heartbeat column never moved")


def stale_after(history: History) -> float | None:
    """The app's declared staleness threshold (seconds), None when it declared none."""
    value = declared_limits(history).get(STALE)
    return None if value is None else float(value)


def _threshold(history: History, snapshot: Snapshot | None) -> Missing | None:
    if stale_after(history) is not None:
        return None
    return Missing("the app declared no heartbeat staleness threshold (heartbeat_stale in config limits)")


HEARTBEATS = Need("heartbeats", "the job table's heartbeat column, logged as it moves", _heartbeats)
STALE_AFTER = Need("stale_after", "the app's declared heartbeat staleness threshold", _threshold)


@dataclass(frozen=True)
class Takeover:
    """Attempt ``attempt`` of ``job_id`` lost the job at ``change`` (``how`` says in what way)."""

    job_id: str
    attempt: int
    how: str
    change: Event


def _job_takeovers(events: list[Event], terminal: set[str], names_writers: bool) -> list[Takeover]:
    found: list[Takeover] = []
    initial, owner = None, None
    for change in sorted(events, key=log_order):
        state, attempt, writer = change.data.get("state"), change.data.get("attempt"), change.data.get(WRITER)
        if state is None:
            continue
        initial = state if initial is None else initial
        if owner is not None:
            if attempt is not None and int(attempt) > owner:
                found.append(Takeover(change.job_id, owner, f"attempt {attempt} claimed the job", change))
            elif (state == initial or state in terminal) and names_writers and writer != owner:
                how = "re-queued" if state == initial else f"set {state!r}"
                found.append(Takeover(change.job_id, owner, f"{how} by {_writer(writer)}", change))
        if state in terminal or state == initial:
            owner = None
        elif attempt is not None:
            owner = int(attempt)
    return found


def _writer(writer: Any) -> str:
    return "a writer that is no attempt" if writer is None else f"attempt {writer}"


def takeovers(history: History, terminal_states: Iterable[str]) -> list[Takeover]:
    """Every change that took a job from the attempt that held it, in time order."""
    changes = history.by_source(v.JOB, name=v.STATE)
    names_writers = bool(declared_limits(history).get(NAMES_WRITERS))
    by_job: dict[str, list[Event]] = {}
    for event in changes:
        if event.job_id is not None:
            by_job.setdefault(event.job_id, []).append(event)
    found = [t for events in by_job.values() for t in _job_takeovers(events, set(terminal_states), names_writers)]
    return sorted(found, key=lambda t: t.change.t)


# -- an attempt's signs of life ---------------------------------------------------------------
def _life(history: History, job_id: str, attempt: int, calls: Iterable[Any]) -> list[float]:
    """When attempt ``attempt`` of the job was seen alive, other than by its heartbeat."""
    seen = []
    for call in calls:
        if call.attempt == attempt:
            seen.append(call.t_start)
            if call.delivered and call.t_end is not None:
                seen.append(call.t_end)
    for event in history.by_job(job_id):
        if event.source in (v.WRITE, v.FAILPOINT) and event.attempt == attempt:
            seen.append(event.t)
        elif event.source == v.JOB and event.name == v.STATE and event.data.get(WRITER) == attempt:
            seen.append(event.t)
    return sorted(seen)


def _owner_pids(history: History, job_id: str, attempt: int, calls: Iterable[Any]) -> set[int]:
    """The processes that ran the attempt: callers of its paid calls, and the task runs (from the
    instrumentation) of its job under way when the attempt claimed it."""
    pids = {int(c.caller_pid) for c in calls if c.attempt == attempt and c.caller_pid is not None}
    claims = [e.t for e in history.by_job(job_id) if e.source == v.JOB and e.name == v.STATE
              and e.data.get("attempt") == attempt]
    if not claims:
        return pids
    claimed, runs = min(claims), {}
    for event in history.by_job(job_id):
        if event.source == v.INSTRUMENT and event.name == "task" and event.data.get("task_id"):
            runs.setdefault(event.data["task_id"], []).append(event)
    for run in runs.values():
        began = [e for e in run if e.type == "invoke"]
        ended = [e.t for e in run if e.type != "invoke"]
        if began and began[0].t <= claimed and (not ended or max(ended) >= claimed) and began[0].data.get("pid"):
            pids.add(int(began[0].data["pid"]))
    return pids


# -- the judgement ----------------------------------------------------------------------------
def _judge(history: History, takeover: Takeover, stale: float, faults: list[Window],
           calls: list[Any]) -> dict[str, Any] | None | str:
    """A violation; ``"excused"`` / ``"dead"`` for a takeover that was right; None when not judged."""
    t = takeover.change.t
    beats = [b for b in _beats(history) if b.job_id == takeover.job_id
             and b.attempt == takeover.attempt and b.t <= t and b.data.get("beat_t") is not None]
    if not beats:
        return None
    latest = max(beats, key=lambda b: b.data["beat_t"])
    last = latest.data["beat_t"]
    owner_pids = _owner_pids(history, takeover.job_id, takeover.attempt, calls)
    if any(hits_owner(w, owner_pids, fired_pids(history, w)) and in_force(w, last, t) for w in faults):
        return "excused"
    age = t - last
    base = {"job_id": takeover.job_id, "attempt": takeover.attempt, "taken": takeover.how,
            "at": history.relative(t), "last_beat": history.relative(last), "silent_for": round(age, 3),
            "stale_after": stale}
    if age < stale:
        if _stale_by_wall_clock(takeover.change, latest, stale):
            return "excused"
        return {**base, "why": "its heartbeat was fresh"}
    if any(cuts_off(w) and in_force(w, t - stale, t) for w in faults):
        return "excused"
    alive = [s for s in _life(history, takeover.job_id, takeover.attempt, calls) if s >= last + stale]
    if not alive:
        return "dead"
    return {**base, "why": "it was alive, nothing kept it from beating, and it did not beat",
            "alive_at": history.relative(alive[0])}


def _stale_by_wall_clock(change: Event, beat: Event, stale: float) -> bool:
    """The app's own clock said stale: the wall clock it dates beats by was stepped forward in between.

    The app judges a heartbeat by wall time (``now() - beat``), which a step of
    the wall clock (NTP, a virtual machine's clock caught up) ages at once; the
    monotonic timeline this check reads does not move. A takeover the step
    caused is the clock's doing, not the app's."""
    beat_at = beat.data.get("beat_at")
    return beat_at is not None and change.wall - float(beat_at) >= stale


def _sentence(f: dict[str, Any]) -> str:
    said = (f"job {f['job_id']}: attempt {f['attempt']} lost the job at {f['at']:.3f}s ({f['taken']}) "
            f"{f['silent_for']:.3f}s after its last beat (stale after {f['stale_after']:g}s): {f['why']}")
    return said + (f" (seen alive at {f['alive_at']:.3f}s)" if "alive_at" in f else "")


@invariant(NAME, needs=(HEARTBEATS, STALE_AFTER))
def no_live_attempt_taken(history: History, snapshot: Snapshot | None) -> Result:
    """No job is taken from an attempt that was alive: its heartbeat fresh, or alive and able to beat."""
    stale = stale_after(history)
    terminal = snapshot.terminal_states if snapshot is not None else DEFAULT_TERMINAL_STATES
    faults, by_job = windows(history), calls_by_job(history)
    violations, verdicts = [], {"excused": 0, "dead": 0}
    judged_each = [_judge(history, takeover, stale, faults, list(by_job.get(takeover.job_id, ())))
                   for takeover in takeovers(history, terminal)]
    judged_each += [judge_kept_token(history, taken, stale, faults) for taken in kept_token_takeovers(history)]
    for verdict in judged_each:
        if isinstance(verdict, dict):
            violations.append(verdict)
        elif verdict is not None:
            verdicts[verdict] += 1
    violations.sort(key=lambda f: f["at"])
    if violations:
        return invalid_result(NAME, f"{len(violations)} job(s) taken from a live attempt; first: "
                              f"{_sentence(violations[0])}", violations, stale_after=stale)
    judged = verdicts["excused"] + verdicts["dead"]
    owners = {(b.job_id, b.attempt) for b in _beats(history) if b.attempt is not None}
    if not judged and not owners:
        return unknown_result(NAME, "no attempt beat: no owner whose job could be taken", stale_after=stale)
    return valid_result(NAME, f"{len(owners)} attempt(s) beat; {judged} takeover(s), each from an attempt dead "
                        f"or silent by its heartbeat ({verdicts['excused']} excused by a fault)",
                        judged=judged, owners=len(owners), stale_after=stale, **verdicts)
