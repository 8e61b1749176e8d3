"""Invariant: retries keep their spacing and their budget.

A retry policy is a promise about time and count: a failed attempt waits
the declared backoff before the next one starts, and a job is given up
after exactly its declared attempts. Attempts back to back let a short
outage use up every one of them; giving up one early (or late) breaks the
count a person was promised; and some failures must not be retried at all:
a time limit means the work is over its budget, and running it again
spends another.

Evidence, each judged where it exists:

* the job state log with the attempt that made each write
  (``writer_attempt``) and the app's declared policy
  (``limits()["retries"] = {"backoff": seconds, "max_attempts": n}``):
  an attempt *gives its job back* when it writes a non-terminal state
  itself (an SQS attempt that failed re-queues its job). The next attempt
  must start (its claim raises the row's attempt) no sooner than
  ``backoff`` after that write; a job that turns terminal after a give-back
  with no attempt in between was *given up*, and must have had exactly
  ``max_attempts`` attempts; no job may ever have more;
* the Celery retries the instrumentation saw (``instrument ok retry``):
  a retry caused by a time limit (``SoftTimeLimitExceeded``,
  ``TimeLimitExceeded``) is invalid, as is a retry due sooner than the
  task's declared ``default_retry_delay`` (when it declares no exponential
  backoff), or past its ``max_retries``.

``unknown`` when nothing declares a policy or nothing was retried: a job
the sweeper rescued after a crash is not a retry, and is not judged here.
"""
from __future__ import annotations

from typing import Any

from harness.checks.end_to_end import declared_limits
from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, Snapshot
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

NAME = "retries_keep_spacing_and_budget"
RETRIES = "retries"  # key of the app's declared limits: {"backoff": seconds, "max_attempts": n}
TIME_LIMITS = ("SoftTimeLimitExceeded", "TimeLimitExceeded")
WRITER = "writer_attempt"


def _tolerance(seconds: float) -> float:
    """Clock granularity between the write and the claim (both the database's statement times)."""
    return max(0.05, 0.02 * seconds)


def _policy(history: History) -> dict[str, Any] | None:
    declared = declared_limits(history).get(RETRIES)
    return dict(declared) if isinstance(declared, dict) else None


def _celery(history: History) -> tuple[Event, ...]:
    return history.by_source(v.INSTRUMENT, name=v.RETRY)


def _give_back(event: Event, terminal: tuple[str, ...]) -> bool:
    writer, row = event.data.get(WRITER), event.data.get("attempt")
    return (writer is not None and row is not None and int(writer) == int(row)
            and event.data.get("state") not in terminal)


def _something_retried(history: History, snapshot: Snapshot | None) -> Missing | None:
    if _celery(history):
        return None
    if _policy(history) is None:
        return Missing("the app declares no retry policy (limits()['retries']) and no Celery task was retried")
    terminal = snapshot.terminal_states if snapshot else DEFAULT_TERMINAL_STATES
    if any(_give_back(e, terminal) for e in history.by_source(v.JOB, name=v.STATE)):
        return None
    return Missing("no attempt gave its job back (no retry happened), or the state log does not say which "
                   "attempt made each write")


RETRIED = Need("retries", "a declared retry policy with a retry in the state log, or a Celery retry",
               _something_retried)


def _order(event: Event) -> tuple[Any, ...]:
    return (event.data.get("log_id") is None, event.data.get("log_id") or 0, event.t)


def _judge_job(history: History, changes: list[Event], policy: dict[str, Any],
               terminal: tuple[str, ...]) -> tuple[list[dict[str, Any]], int]:
    """One job's retries against the policy: (violations, retries judged)."""
    backoff, most = float(policy.get("backoff") or 0.0), policy.get("max_attempts")
    found, judged = [], 0
    events = sorted(changes, key=_order)
    for i, back in enumerate(events):
        if not _give_back(back, terminal):
            continue
        attempt = int(back.data["attempt"])
        nxt = next((e for e in events[i + 1:] if e.data.get("state") != back.data.get("state")
                    or (e.data.get("attempt") or 0) > attempt), None)
        if nxt is None:
            continue
        base = {"job_id": back.job_id, "attempt": attempt, "gave_back_at": history.relative(back.t),
                "reason": back.data.get("reason")}
        if (nxt.data.get("attempt") or 0) > attempt:
            judged += 1
            gap = nxt.t - back.t
            if gap < backoff - _tolerance(backoff):
                found.append({**base, "kind": "too soon", "next_attempt": nxt.data.get("attempt"),
                              "next_at": history.relative(nxt.t), "waited_s": round(gap, 3), "backoff_s": backoff})
        elif nxt.data.get("state") in terminal and most is not None:
            judged += 1
            if attempt != int(most):
                found.append({**base, "kind": "given up after fewer attempts" if attempt < int(most)
                              else "given up after more attempts", "attempts": attempt, "max_attempts": int(most),
                              "final_state": nxt.data.get("state"), "given_up_at": history.relative(nxt.t)})
    return found, judged


def _over_budget(history: History, changes: list[Event], most: Any) -> list[dict[str, Any]]:
    if most is None:
        return []
    over = [e for e in changes if (e.data.get("attempt") or 0) > int(most)]
    return [{"job_id": over[0].job_id, "kind": "more attempts than declared", "attempts": over[0].data["attempt"],
             "max_attempts": int(most), "at": history.relative(over[0].t)}] if over else []


def _judge_celery(history: History, retry: Event) -> dict[str, Any] | None:
    d = retry.data
    base = {"job_id": retry.job_id, "attempt": retry.attempt, "task": d.get("task"), "task_id": d.get("task_id"),
            "cause": d.get("cause"), "at": history.relative(retry.t)}
    if d.get("cause") in TIME_LIMITS:
        return {**base, "kind": "a time limit was retried"}
    declared, due = d.get("default_retry_delay"), d.get("due_in_s")
    if declared is not None and due is not None and not d.get("retry_backoff") \
            and float(due) < float(declared) - _tolerance(float(declared)):
        return {**base, "kind": "too soon", "waited_s": round(float(due), 3), "backoff_s": float(declared)}
    if d.get("max_retries") is not None and int(d.get("retries") or 0) >= int(d["max_retries"]):
        return {**base, "kind": "more retries than declared", "retries": int(d.get("retries") or 0) + 1,
                "max_retries": int(d["max_retries"])}
    return None


def _describe(f: dict[str, Any]) -> str:
    if f["kind"] == "too soon":
        return (f"job {f['job_id']}: the next attempt came {f['waited_s']:g}s after attempt {f['attempt']} "
                f"failed, the declared backoff is {f['backoff_s']:g}s")
    if f["kind"].startswith("given up"):
        return (f"job {f['job_id']} was {f['kind']}: {f['attempts']} attempt(s), "
                f"{f['max_attempts']} declared")
    if f["kind"] == "a time limit was retried":
        return f"job {f['job_id']}: task {f['task']} [{f['task_id']}] was retried after {f['cause']}"
    return f"job {f['job_id']}: {f['kind']}"


@invariant(NAME, needs=(RETRIED,))
def retries_keep_spacing_and_budget(history: History, snapshot: Snapshot | None) -> Result:
    """Retries wait the declared backoff, give up after exactly the declared attempts, never retry a time limit."""
    terminal = tuple(snapshot.terminal_states if snapshot else DEFAULT_TERMINAL_STATES)
    policy = _policy(history)
    violations, judged = [], 0
    if policy is not None:
        by_job: dict[str, list[Event]] = {}
        for event in history.by_source(v.JOB, name=v.STATE):
            if event.job_id is not None:
                by_job.setdefault(event.job_id, []).append(event)
        for changes in by_job.values():
            found, n = _judge_job(history, changes, policy, terminal)
            violations += found + _over_budget(history, changes, policy.get("max_attempts"))
            judged += n
    for retry in _celery(history):
        judged += 1
        if (found_celery := _judge_celery(history, retry)) is not None:
            violations.append(found_celery)
    if violations:
        return invalid_result(NAME, f"{len(violations)} retry rule(s) broken; first: {_describe(violations[0])}",
                              violations, policy=policy)
    if not judged:
        return unknown_result(NAME, "no retry was followed by another attempt or a give-up: nothing to judge",
                              policy=policy)
    return valid_result(NAME, f"{judged} retry(ies) kept the declared spacing and budget", judged=judged,
                        policy=policy)
