"""Takeovers that keep the attempt number, seen from the taken attempt's own heartbeats.

An app that hands a job to a new attempt under the number the old one held
(a claim that marks a stale job ``running`` again without raising its
attempt, two claims that read the same row and both write ``attempt + 1``)
leaves no trace in the state log: the row's attempt never changes. Its
heartbeat log does: every beat carries the writing session's name
(``writer``, ``jobquake:<process>:<pid>`` from the instrumentation), and one
attempt number beating from two processes is two owners of one token.
Fencing cannot tell them apart, so both write.

``kept_token_takeovers`` lists each such change of hands: the first beat
of attempt ``n`` of a job by a process other than the one that beat for it
so far. ``judge_kept_token`` then reads the taken attempt's own beats:

* it beat again after the takeover: both own the job (invalid, whatever
  made it stale: a frozen process that wakes still holds the token);
* its last beat before the takeover was fresh by the app's threshold
  (invalid, unless a fault killed, stopped or froze its process meanwhile,
  or the wall clock the app judges by was stepped forward);
* else it was dead, and the takeover was right.

Beats whose writer is unknown (an app process without the instrumentation,
or one that names its sessions itself the same way everywhere) are not judged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.checks.landed import Window
from harness.checks.liveness_faults import fired_pids, hits_owner, in_force
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

WRITER = "writer"


@dataclass(frozen=True)
class KeptToken:
    """Process ``by`` began beating for attempt ``attempt`` of ``job_id``, which ``owner`` held, at ``first``."""

    job_id: str
    attempt: int
    owner: str
    by: str
    first: Event


def log_order(event: Event) -> tuple[Any, ...]:
    """The order rows were logged in (their log id; events without one after, by time)."""
    return (event.data.get("log_id") is None, event.data.get("log_id") or 0, event.t)


def _beats_by_token(history: History) -> dict[tuple[str, int], list[Event]]:
    found: dict[tuple[str, int], list[Event]] = {}
    for beat in history.by_source(v.HEARTBEAT, name=v.BEAT):
        if beat.job_id is not None and beat.attempt is not None and beat.data.get(WRITER):
            found.setdefault((beat.job_id, int(beat.attempt)), []).append(beat)
    return {key: sorted(beats, key=log_order) for key, beats in found.items()}


def kept_token_takeovers(history: History) -> list[KeptToken]:
    """Every change of hands under one attempt number, in time order."""
    found = []
    for (job_id, attempt), beats in _beats_by_token(history).items():
        owner = beats[0].data[WRITER]
        for beat in beats[1:]:
            if beat.data[WRITER] != owner:
                found.append(KeptToken(job_id, attempt, owner, beat.data[WRITER], beat))
                owner = beat.data[WRITER]
    return sorted(found, key=lambda k: k.first.t)


def _session_name(writer: str | None) -> list[str]:
    """``[process]`` or ``[process, pid]`` of a ``jobquake:<process>[:<pid>]`` session name, [] for any other."""
    parts = (writer or "").split(":")
    return parts[1:] if len(parts) in (2, 3) and parts[0] == "jobquake" and parts[1] else []


def writer_pid(writer: str) -> int | None:
    """The pid in a ``jobquake:<process>:<pid>`` session name, None for any other name."""
    named = _session_name(writer)
    return int(named[1]) if len(named) == 2 and named[1].isdigit() else None


def writer_process(writer: str | None) -> str | None:
    """The stack's process in a ``jobquake:<process>[:<pid>]`` session name, None for any other name."""
    named = _session_name(writer)
    return named[0] if named else None


def judge_kept_token(history: History, taken: KeptToken, stale: float,
                     faults: list[Window]) -> dict[str, Any] | str | None:
    """A violation; ``"excused"`` / ``"dead"`` for a takeover that was right; None when not judged."""
    t = taken.first.t
    own = [b for b in _beats_by_token(history).get((taken.job_id, taken.attempt), [])
           if b.data[WRITER] == taken.owner and b.data.get("beat_t") is not None]
    before = [b for b in own if b.t < t]
    if not before:
        return None
    latest = max(before, key=lambda b: b.data["beat_t"])
    last = latest.data["beat_t"]
    base = {"job_id": taken.job_id, "attempt": taken.attempt, "taken": f"claimed again under attempt "
            f"{taken.attempt} by {taken.by}, from {taken.owner}", "at": history.relative(t),
            "last_beat": history.relative(last), "silent_for": round(t - last, 3), "stale_after": stale}
    again = [b for b in own if b.t > t]
    if again:
        return {**base, "why": "the taken attempt beat again under the same token: both own the job",
                "alive_at": history.relative(again[0].t)}
    pid = writer_pid(taken.owner)
    owner = {pid} if pid is not None else set()
    if any(hits_owner(w, owner, fired_pids(history, w)) and in_force(w, last, t) for w in faults):
        return "excused"
    if t - last < stale:
        beat_at = latest.data.get("beat_at")
        if beat_at is not None and taken.first.wall - float(beat_at) >= stale:
            return "excused"  # stale by the app's wall clock, which was stepped forward in between
        return {**base, "why": "its heartbeat was fresh"}
    return "dead"
