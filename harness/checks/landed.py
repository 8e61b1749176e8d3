"""Invariant-like check: every fault the scenario injected took effect, shown by the app's own evidence.

A fault the harness injected is not yet a fault the app suffered: a kill
can hit an idle worker, a hang can be set while no call is made, a pool can
be emptied after its last checkout. Each injected fault (the ``fault``
events of the history, one window per ``invoke inject``, open until its
``invoke heal``) is judged by a landing rule of its kind, from what the app
produced inside the window:

==========================  ================================================================
fault                       landed when
==========================  ================================================================
kill_worker                 the killed worker's process tree held the named call (the
                            ledger's ``caller_pid``) / fired the named failpoint; for a
                            kill "now": it held a paid call then, or a job got a new
                            attempt afterwards
hang_endpoint               provider: at least one call was held (the provider's hang mode
                            took it); network: as network_toxic (bytes reached its toxic)
failpoint / exhaust_pool    the app fired it (a trigger without error) in the window
poison_row                  a sweep run listed the row (its id among eligible rows), or, for a
                            row of the job table, the app changed its state after it was inserted
duplicate_submission        the app answered at least two of the submissions
network_toxic               bytes went through the toxic while it was set (the embedded
                            proxy's ``jobquake_bytes`` count, read at heal); against a real
                            Toxiproxy: on the paid API proxy a paid call began in the
                            window, on any other proxy unknown (no count to read)
pause_service               a frozen process held a paid call; or the app logged a timeout /
                            connection error meanwhile; or (not a worker) a job in flight,
                            in no paid call, stalled across the window and moved on after;
                            a defence switched off (defence_off=True): still frozen at heal
stop_service                the service was still stopped at the heal
paidapi_mode                a paid call began in the window and was taken in that mode
database_restart            the app logged the lost database (an error, a pre-ping reconnect)
proxy_down                  the app's logs show a connection refused meanwhile
broker_outage               the app's logs show a publish / consume that failed meanwhile
hold_database_connections   the app's logs show a connection it could not get meanwhile
==========================  ================================================================

A fault that did not land makes the result ``unknown`` with a sentence
saying why ("kill_worker killed worker-0 (pid 81), which held no paid
call, and no job was retried after it"). Faults of other kinds are listed
as not judged. ``effects`` in the details gives, per fault, when its effect
was seen, which the timeline marks.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.checks.job_events import fault_pids
from harness.checks.paid_calls import PaidCall, paid_calls
from harness.checks.result import UNKNOWN, Result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import FAIL, INFO, INVOKE, OK
from harness.history.history import History
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, Snapshot

NAME = "faults_landed"
PAIDAPI_PROXY = "paidapi"


@dataclass
class Window:
    """One injection of one fault, as its events tell it."""

    fault: str
    params: dict[str, Any]
    invoked_at: float
    injected_at: float | None = None  # the ``ok inject``: when the damage was done
    details: dict[str, Any] = field(default_factory=dict)
    healed_at: float | None = None
    heal_details: dict[str, Any] = field(default_factory=dict)  # the ``ok heal``: what was seen meanwhile
    failure: str | None = None  # ``fail inject`` / ``info inject`` (a moment that never came)

    def contains(self, t: float) -> bool:
        # from the invoke: a fault acts during inject() (a submission sent twice, a mode set)
        return self.invoked_at <= t and (self.healed_at is None or t <= self.healed_at)


@dataclass(frozen=True)
class Landing:
    """A rule's answer: did it land, the sentence, and when its effect was seen."""

    landed: bool
    sentence: str
    effect_at: float | None = None


def windows(history: History) -> list[Window]:
    """Every injection in the history, oldest first."""
    found: list[Window] = []
    open_: dict[str, Window] = {}
    for event in history.by_source(v.FAULT):
        data = dict(event.data)
        key = json.dumps([data.get("fault"), data.get("params")], sort_keys=True, default=str)
        if event.name == v.INJECT and event.type == INVOKE:
            open_[key] = Window(str(data.get("fault")), dict(data.get("params") or {}), event.t)
            found.append(open_[key])
            continue
        window = open_.get(key)
        if window is None:
            continue
        if event.name == v.INJECT and event.type == OK:
            window.injected_at = event.t
            window.details = {k: val for k, val in data.items() if k not in ("fault", "params")}
        elif event.name == v.INJECT and event.type in (FAIL, INFO):
            window.failure = str(data.get("error") or data.get("reason") or "it did not happen")
        elif event.name == v.HEAL and event.type == INVOKE and window.healed_at is None:
            window.healed_at = event.t
        elif event.name == v.HEAL and event.type == OK:
            window.heal_details = {k: val for k, val in data.items() if k not in ("fault", "params")}
    return found


def _held_by(call: PaidCall, pids: set[int]) -> bool:
    return call.caller_pid is not None and call.caller_pid in pids


def _kill(history: History, w: Window) -> Landing:
    d, at = w.details, w.injected_at
    who = f"kill_worker killed {d.get('worker', 'a worker')}" + (f" (pid {d['pid']})" if d.get("pid") else "")
    calls = paid_calls(history)
    if d.get("failpoint"):
        fired = [e for e in history.by_source(v.FAILPOINT, name=d["failpoint"]) if e.t <= at]
        if fired:
            return Landing(True, f"{who} at failpoint {d['failpoint']!r}, which the app reached "
                           f"(pid {fired[-1].data.get('pid')})", fired[-1].t)
        return Landing(False, f"{who}, but no trigger of failpoint {d['failpoint']!r} was recorded")
    pids = fault_pids(d)
    if d.get("call_id") is not None:
        call = next((c for c in calls if c.call_id == str(d["call_id"])), None)
        if call is not None and _held_by(call, pids):
            return Landing(True, f"{who}, which held call {call.call_id} of job {call.job_id} "
                           f"(caller pid {call.caller_pid})", call.t_start)
        if call is None:
            return Landing(False, f"{who}, but the named call {d['call_id']} is not in the ledger")
        return Landing(False, f"{who}, but the named call {d['call_id']} was made by pid {call.caller_pid}, "
                       f"not by that worker")
    held = [c for c in calls if _held_by(c, pids) and c.t_start <= at and (c.t_end is None or c.t_end >= at)]
    if held:
        return Landing(True, f"{who}, which held call {held[0].call_id} of job {held[0].job_id}", at)
    retried = [e for e in history if e.t > at and e.source == v.JOB
               and (e.name == v.ATTEMPT_DEAD or (e.attempt or 0) > 1)]
    if retried:
        first = retried[0]
        what = (f"attempt {first.attempt} of job {first.job_id} was declared dead" if first.name == v.ATTEMPT_DEAD
                else f"job {first.job_id} was given attempt {first.attempt}")
        return Landing(True, f"{who}; {what} after it", first.t)
    return Landing(False, f"{who}, which held no paid call, and no job was given another attempt after it")


def _hang(history: History, w: Window) -> Landing:
    inside = [c for c in paid_calls(history) if w.contains(c.t_start)
              and (w.params.get("job_id") is None or c.job_id == w.params["job_id"])]
    if w.params.get("layer", "provider") != "provider":
        return _through_proxy(history, w)  # the toxic sees bytes: a call through it while it was set
    held = [c for c in inside if c.hung or c.mode == "hang"]  # healed hangs end 503, still held till then
    what = "held (hung)"
    if held:
        return Landing(True, f"hang_endpoint ({w.params.get('layer', 'provider')}): {len(held)} call(s) "
                       f"{what}, first {held[0].call_id} of job {held[0].job_id}", held[0].t_start)
    return Landing(False, f"hang_endpoint ({w.params.get('layer', 'provider')}) was set, but no call "
                   f"was {what} while it was ({len(inside)} call(s) in the window)")


def _failpoint(history: History, w: Window) -> Landing:
    name = str(w.params.get("at"))
    fired = [e for e in history.by_source(v.FAILPOINT, name=name) if w.contains(e.t)]
    if fired:
        return Landing(True, f"{w.fault} at {name!r}: the app reached it {len(fired)} time(s), first in "
                       f"pid {fired[0].data.get('pid')}", fired[0].t)
    return Landing(False, f"{w.fault} at {name!r} was armed, but the app never reached it while it was")


def _poison_row(history: History, w: Window) -> Landing:
    job_id = w.details.get("job_id")
    if job_id is not None:  # a row of the job table: the app writing to it shows it was reached
        touched = [e for e in history.by_source(v.JOB) if e.job_id == str(job_id) and e.t > w.invoked_at
                   and e.data.get("op") != "INSERT"]
        if touched:
            return Landing(True, f"poison_row: the app changed job {job_id} to {touched[0].data.get('state')!r} "
                           f"after it was inserted", touched[0].t)
    row_id = (w.details.get("inserted") or {}).get("id", job_id)
    sweeps = [e for e in history.by_source(v.SWEEP, name=v.SWEEP) if e.t >= w.invoked_at]
    if row_id is None:
        return Landing(False, "poison_row: the row's id was not recorded, so no sweep can be shown to reach it")
    for event in sweeps:
        listed = {str(r) for key in ("eligible", "processed", "failed") for r in event.data.get(key) or ()}
        if str(row_id) in listed:
            return Landing(True, f"poison_row: sweep run {event.data.get('run_id')} reached row {row_id}", event.t)
    if not sweeps:
        return Landing(False, f"poison_row: no sweep run was recorded after row {row_id} was inserted")
    return Landing(False, f"poison_row: {len(sweeps)} sweep run(s) recorded, none reached row {row_id}")


def _duplicate(history: History, w: Window) -> Landing:
    answered = [e for e in history.by_source(v.SUBMIT, name=v.SUBMIT) if e.type in (OK, FAIL) and w.contains(e.t)]
    if len(answered) >= 2:
        return Landing(True, f"duplicate_submission: the app answered {len(answered)} submissions", answered[1].t)
    return Landing(False, f"duplicate_submission: the app answered {len(answered)} submission(s), not two")


def _through_proxy(history: History, w: Window) -> Landing:
    """A toxic lands when bytes went through it while it was set.

    The count is the embedded proxy's (``toxic_bytes``, read at heal). A real
    Toxiproxy counts nothing: then a toxic on the paid API's proxy falls back
    to the ledger (a paid call began in the window), and any other is unknown.
    """
    proxy = str(w.params.get("proxy", PAIDAPI_PROXY))
    seen = w.heal_details.get("toxic_bytes")
    if isinstance(seen, int) and not isinstance(seen, bool):
        if seen > 0:
            return Landing(True, f"{w.fault} on {proxy}: {seen} byte(s) went through it while it was set",
                           w.healed_at)
        return Landing(False, f"{w.fault} on {proxy} was set, but no byte went through it while it was")
    if proxy == PAIDAPI_PROXY:
        inside = [c for c in paid_calls(history) if w.contains(c.t_start)]
        if inside:
            return Landing(True, f"{w.fault} on {PAIDAPI_PROXY}: {len(inside)} paid call(s) went through it",
                           inside[0].t_start)
        return Landing(False, f"{w.fault} on {PAIDAPI_PROXY} was set, but no paid call went through it")
    why = ("the toxic was gone before its count was read" if w.heal_details.get("toxic_gone")
           else "it was never healed, so its count was never read" if w.healed_at is None
           else "the proxy reports no byte count (a real Toxiproxy does not)")
    return Landing(False, f"{w.fault} on {proxy}: cannot tell whether any bytes passed: {why}")


def _log_evidence(w: Window) -> tuple[int, str]:
    return int(w.heal_details.get("app_errors") or 0), (w.heal_details.get("app_error_lines") or ["?"])[0]


def _stalled_job(history: History, w: Window) -> tuple[str, float] | None:
    """A job in flight at the freeze, in no paid call, with no job event in the window and one after it."""
    at, until = w.injected_at, w.healed_at
    if at is None or until is None:
        return None
    calls = paid_calls(history)
    for job_id in history.jobs():
        events = [e for e in history.by_job(job_id) if e.source == v.JOB]
        before = [e for e in events if e.t <= at and e.name == v.STATE]
        after = [e for e in events if e.t > until]
        if not before or not after or before[-1].data.get("state") in DEFAULT_TERMINAL_STATES:
            continue
        if any(at < e.t <= until for e in events):
            continue
        if any(c.job_id == job_id and c.t_start <= until and (c.t_end is None or c.t_end >= at) for c in calls):
            continue  # waiting on a paid call: its silence is explained without the pause
        return job_id, after[0].t
    return None


def _pause(history: History, w: Window) -> Landing:
    """A pause lands when the frozen service had work it could not do, by the app's evidence.

    - any service: one of its frozen processes (``tree``) held a paid call
      (the ledger's ``caller_pid``) when it was frozen; or an app process
      logged a timeout / connection error while it was frozen (what a frozen
      Redis, Postgres or SQS gives its clients);
    - a defence switched off (``defence_off=True``): its effect is the passes
      that did not run, which no app record shows; it lands when the
      process was still frozen at the heal (read from ``/proc``), and makes
      no claim that a pass was needed;
    - not a worker (infrastructure, relay, consumer, ...): a job in flight at
      the freeze and not in a paid call made no state change in the window
      and changed state after the resume. A worker's stall is not accepted:
      the history cannot tell which worker a job waited on, and another
      worker's slow job would pass for it.
    """
    d, at = w.details, w.injected_at
    service = w.params.get("service", "a service")
    who = f"pause_service froze {service}" + (f" (pid {d['pid']})" if d.get("pid") else "")
    if w.params.get("defence_off"):
        return _defence_off(w, who)
    pids = fault_pids(d)
    held = [c for c in paid_calls(history)
            if _held_by(c, pids) and at is not None and c.t_start <= at and (c.t_end is None or c.t_end >= at)]
    if held:
        return Landing(True, f"{who} while it held call {held[0].call_id} of job {held[0].job_id}", at)
    count, first = _log_evidence(w)
    if count:
        return Landing(True, f"{who}; the app logged {count} timeout / connection error(s) meanwhile; "
                       f"first: {first}", w.healed_at)
    stalled = _stalled_job(history, w) if d.get("role") != "worker" else None
    if stalled:
        return Landing(True, f"{who}; job {stalled[0]} was in flight, made no progress while it was frozen "
                       f"and moved on after the resume", stalled[1])
    what = "held no paid call" + ("" if d.get("role") == "worker" else ", no job in flight stalled")
    return Landing(False, f"{who}, which {what}, and the app logged no timeout or connection error meanwhile")


def _defence_off(w: Window, who: str) -> Landing:
    if w.heal_details.get("frozen_until_heal") is True:
        return Landing(True, f"{who}, a defence switched off: it stayed frozen until the heal, so none of "
                       f"its passes ran in the window", w.healed_at)
    why = "it was never healed" if w.healed_at is None else "it was not frozen any more at the heal"
    return Landing(False, f"{who}, a defence switched off, but {why}: it may have run in the window")


def _stop(history: History, w: Window) -> Landing:
    """A stopped service lands when it was still stopped at the heal: none of its work ran in the window."""
    who = f"stop_service stopped {w.params.get('service', 'a service')}"
    if w.heal_details.get("stopped_until_heal") is True:
        return Landing(True, f"{who}; it stayed stopped until the heal", w.healed_at)
    why = "it was never healed" if w.healed_at is None else "it was running again before the heal"
    return Landing(False, f"{who}, but {why}: it may have run in the window")


def _mode(history: History, w: Window) -> Landing:
    """A provider mode lands when a paid call began in the window and the provider took it in that mode."""
    mode = w.params.get("mode")
    taken = [c for c in paid_calls(history) if w.contains(c.t_start) and c.mode == mode]
    if taken:
        return Landing(True, f"paidapi_mode {mode}: {len(taken)} paid call(s) answered {mode}, first "
                       f"{taken[0].call_id} of job {taken[0].job_id}", taken[0].t_start)
    return Landing(False, f"paidapi_mode {mode} was set, but no paid call was answered {mode} while it was")


def _database_restart(history: History, w: Window) -> Landing:
    """Lands when an app process logged that the database went away (an error, a pre-ping reconnect)."""
    count, first = _log_evidence(w)
    if count:
        return Landing(True, f"database_restart: the app saw the database go: {count} line(s) logged; "
                       f"first: {first}", w.healed_at)
    return Landing(False, "database_restart cut every session, but no app process logged a lost connection "
                   "or a reconnect before the heal (it did not use the database meanwhile)")


def _app_errors(felt: str) -> Callable[[History, Window], Landing]:
    def rule(history: History, w: Window) -> Landing:
        count = int(w.heal_details.get("app_errors") or 0)
        if count:
            first = (w.heal_details.get("app_error_lines") or ["?"])[0]
            return Landing(True, f"{w.fault}: the app logged {count} {felt} while it was set; first: {first}",
                           w.healed_at)
        return Landing(False, f"{w.fault} was set, but the app logged no {felt} while it was "
                       f"(it made no attempt, or the fault was healed first)")
    return rule


RULES: dict[str, Callable[[History, Window], Landing]] = {
    "broker_outage": _app_errors("failed publish / consume"),
    "hold_database_connections": _app_errors("refused or timed-out connection checkout"),
    "kill_worker": _kill, "hang_endpoint": _hang, "failpoint": _failpoint, "exhaust_pool": _failpoint,
    "poison_row": _poison_row, "duplicate_submission": _duplicate, "network_toxic": _through_proxy,
    "proxy_down": _app_errors("refused connection"),
    "pause_service": _pause, "database_restart": _database_restart, "stop_service": _stop,
    "paidapi_mode": _mode,
}


def _judge(history: History, w: Window) -> Landing | None:
    if w.injected_at is None:
        return Landing(False, f"{w.fault} was never injected: {w.failure or 'no ok inject recorded'}")
    rule = RULES.get(w.fault)
    return None if rule is None else rule(history, w)


@invariant(NAME)
def faults_landed(history: History, snapshot: Snapshot | None) -> Result:
    """Every injected fault shows, in the app's evidence, that it took effect."""
    found = windows(history)
    if not found:
        return Result(NAME, UNKNOWN, "no fault was injected: nothing to show landing")
    effects, missed, unjudged = [], [], []
    for w in found:
        landing = _judge(history, w)
        if landing is None:
            unjudged.append(w.fault)
            continue
        item = {"fault": w.fault, "landed": landing.landed, "why": landing.sentence,
                "injected_at": history.relative(w.injected_at) if w.injected_at is not None else None,
                "effect_at": None if landing.effect_at is None else history.relative(landing.effect_at)}
        (effects if landing.landed else missed).append(item)
    details = {"effects": effects + missed, "unjudged": unjudged}
    if missed:
        return Result(NAME, UNKNOWN, f"{len(missed)} of {len(found)} fault(s) did not land; first: "
                      f"{missed[0]['why']}", counterexample=missed, details=details)
    tail = f" ({', '.join(unjudged)}: effect not checked)" if unjudged else ""
    return valid_result(NAME, "; ".join(e["why"] for e in effects) + tail if effects
                        else f"no landing rule for {', '.join(unjudged)}", **details)
