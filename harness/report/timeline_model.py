"""What the HTML timeline draws, computed from a history: lanes, bars, marks, windows.

Kept apart from the drawing so it can be tested without parsing SVG. Times
are seconds since the history's first event.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from harness.checks.job_events import job_events
from harness.checks.paid_calls import PaidCall, calls_by_job
from harness.checks.result import Verdict
from harness.history import vocabulary as v
from harness.history.event import INVOKE, Event
from harness.history.history import History
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, Snapshot
from harness.report.highlights import duplicate_calls, flagged_jobs

MAX_JOB_LANES = 300  # beyond this the page gets slow; flagged jobs are always drawn first


@dataclass
class Bar:
    """A job in one state from ``start`` to ``end``."""
    start: float
    end: float
    state: str
    tip: str
    final: bool = False  # the job's final, terminal state: drawn faint so activity stands out


@dataclass
class CallMark:
    """A paid call: a line from start to end, a mark at the end."""
    start: float
    end: float | None
    billed: bool
    outcome: str
    duplicate: bool
    tip: str


@dataclass
class PointMark:
    """Something that happened at one instant (a failpoint, a death, a status event...)."""
    at: float
    kind: str  # failpoint / attempt_dead / write_ok / write_refused / status / worker_killed / ...
    tip: str


@dataclass
class Lane:
    """One row of the chart: a job, or the harness-wide events."""
    label: str
    final_state: str | None = None
    flagged: bool = False
    bars: list[Bar] = field(default_factory=list)
    calls: list[CallMark] = field(default_factory=list)
    points: list[PointMark] = field(default_factory=list)


@dataclass
class Window:
    """A fault window, shaded across every row."""
    start: float
    end: float
    label: str
    tip: str


@dataclass
class TimelineModel:
    """Everything the chart draws; ``hidden_jobs`` counts the lanes left out."""
    duration: float
    jobs: list[Lane]
    harness: Lane
    windows: list[Window]
    hidden_jobs: int = 0


def _tip(event: Event, start: float) -> str:
    parts = [f"{event.source} {event.type} {event.name}", f"t=+{event.t - start:.3f}s"]
    if event.job_id is not None:
        parts.append(f"job {event.job_id}" + ("" if event.attempt is None else f" attempt {event.attempt}"))
    parts += [f"{k}: {val}" for k, val in event.data.items()]
    return "\n".join(parts)


def _bars(states: list[Event], start: float, end: float, terminal: tuple[str, ...]) -> list[Bar]:
    bars = []
    for this, nxt in zip(states, [*states[1:], None]):
        stop = end if nxt is None else nxt.t - start
        state = str(this.data.get("state"))
        bars.append(Bar(this.t - start, stop, state, _tip(this, start),
                        final=nxt is None and state in terminal))
    return bars


def _call_mark(call: PaidCall, start: float, dups: set[str]) -> CallMark:
    tip = "\n".join([f"paid call {call.call_id} ({call.step})", f"attempt {call.attempt}",
                     f"key {call.key}", f"start +{call.t_start - start:.3f}s",
                     "end " + ("never" if call.t_end is None else f"+{call.t_end - start:.3f}s"),
                     f"outcome {call.outcome or 'none'} / ledger state {call.state}",
                     f"billed {call.billed}, delivered {call.delivered}",
                     *(["DUPLICATE BILLING"] if call.call_id in dups else [])])
    return CallMark(call.t_start - start, None if call.t_end is None else call.t_end - start,
                    call.billed, call.outcome, call.call_id in dups, tip)


_POINT_KINDS = {(v.FAILPOINT, None): "failpoint", (v.JOB, v.ATTEMPT_DEAD): "attempt_dead",
                (v.EVENT, v.STATUS): "status", (v.WORKER, v.WORKER_KILLED): "worker_killed",
                (v.WORKER, v.WORKER_START): "worker", (v.WORKER, v.WORKER_READY): "worker",
                (v.WORKER, v.WORKER_EXITED): "worker", (v.SWEEP, v.SWEEP): "sweep",
                (v.QUERY, v.SCAN): "query", (v.BUDGET, v.DECLARED): "budget",
                (v.BUDGET, v.EFFECTIVE): "budget", (v.JOB, v.DELETED): "deleted",
                (v.HARNESS, v.SETTLE): "settle"}


def point_kind(event: Event) -> str | None:
    """Which mark an event gets, or None when it is drawn otherwise (or not at all)."""
    if event.source == v.WRITE:
        return "write_refused" if event.data.get("refused") or event.type != "ok" else "write_ok"
    if event.source == v.SUBMIT and event.type != INVOKE:
        return "submit"
    return _POINT_KINDS.get((event.source, None if event.source == v.FAILPOINT else event.name))


def _job_lane(history: History, snapshot: Snapshot | None, job_id: str, calls: Iterable[PaidCall],
              dups: set[str], flagged: bool) -> Lane:
    start, end = history.start, history.end - history.start
    events = job_events(history, job_id)  # a worker's death that hit the job is marked in its row too
    row = snapshot.job(job_id) if snapshot is not None else None
    states = [e for e in events if e.source == v.JOB and e.name == v.STATE]
    final = row.state if row is not None else (str(states[-1].data.get("state")) if states else None)
    terminal = snapshot.terminal_states if snapshot is not None else DEFAULT_TERMINAL_STATES
    lane = Lane(job_id, final, flagged, _bars(states, start, end, terminal),
                [_call_mark(c, start, dups) for c in calls])
    for event in events:
        kind = point_kind(event)
        if kind is not None:
            lane.points.append(PointMark(event.t - start, kind, _tip(event, start)))
    return lane


def lane_span(lane: Lane, pad: float = 0.08) -> tuple[float, float] | None:
    """The time range where a job was active (its final state's start, not its end), padded."""
    times = [b.start for b in lane.bars] + [b.end for b in lane.bars if not b.final]
    times += [c.start for c in lane.calls] + [c.end for c in lane.calls if c.end is not None]
    times += [p.at for p in lane.points]
    if not times:
        return None
    lo, hi = min(times), max(times)
    margin = max((hi - lo) * pad, 1e-3)
    return max(0.0, lo - margin), hi + margin


def _windows(history: History) -> list[Window]:
    """Fault windows: from each inject to the next heal of the same fault (or the end)."""
    start = history.start
    open_: dict[str, Event] = {}
    windows = []
    for event in history.by_source(v.FAULT):
        fault = str(event.data.get("fault", "fault"))
        if event.name == v.INJECT and fault not in open_:
            open_[fault] = event
        elif event.name == v.HEAL and event.type != INVOKE and fault in open_:
            began = open_.pop(fault)
            windows.append(Window(began.t - start, event.t - start, fault, _tip(began, start)))
    for fault, began in open_.items():
        windows.append(Window(began.t - start, history.end - start, fault + " (never healed)",
                              _tip(began, start)))
    return windows


def build_model(history: History, verdict: Verdict | None, snapshot: Snapshot | None,
                max_lanes: int = MAX_JOB_LANES) -> TimelineModel:
    """Lanes for jobs (flagged ones first), one lane for harness-wide events, fault windows."""
    flagged, dups = flagged_jobs(verdict), duplicate_calls(verdict)
    jobs = history.jobs() + [r.job_id for r in (snapshot.jobs if snapshot else ()) if not history.by_job(r.job_id)]
    jobs.sort(key=lambda j: j not in flagged)  # stable: first-seen order within each group
    calls = calls_by_job(history)
    lanes = [_job_lane(history, snapshot, j, calls.get(j, ()), dups, j in flagged) for j in jobs[:max_lanes]]
    harness = Lane("harness")
    for event in history:
        kind = point_kind(event)
        if event.job_id is None and kind is not None:
            harness.points.append(PointMark(event.t - history.start, kind, _tip(event, history.start)))
    harness.points.extend(_fault_effects(verdict))
    return TimelineModel(history.end - history.start, lanes, harness, _windows(history),
                         hidden_jobs=max(0, len(jobs) - max_lanes))


def _fault_effects(verdict: Verdict | None) -> list[PointMark]:
    """Where each fault was seen to take effect (or, when it did not, where it was injected)."""
    names = verdict.names() if verdict is not None else []
    if "faults_landed" not in names:
        return []
    marks = []
    for effect in verdict["faults_landed"].details.get("effects") or ():  # type: ignore[union-attr]
        at = effect.get("effect_at") if effect.get("landed") else effect.get("injected_at")
        if at is not None:
            kind = "fault_landed" if effect.get("landed") else "fault_missed"
            marks.append(PointMark(float(at), kind, str(effect.get("why"))))
    return marks
