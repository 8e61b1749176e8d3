"""Invariant: no paid call was billed twice.

Two billed calls are duplicates when they carry the same idempotency key, or
belong to the same job and the same step (a call without a step counts as
the job's only paid call, so apps should label their steps). Each duplicate
pair is judged by who could have prevented it:

* same key, billed twice: the provider broke its promise. Invalid: the
  customer paid twice, whoever's fault it is.
* different keys, or no key, and the provider honours keys
  (``provider_dedups=True``, the default): the app controls the key and
  should have reused it on retry. Invalid, whether or not the first
  result was delivered.
* the provider offers no deduplication (``provider_dedups=False``):

  - the first call's result was delivered before the second call started:
    the app knew it had been served and paid again. Invalid.
  - the first result was never delivered (client gone, lost answer), or
    was delivered only after the second call had started: neither the
    provider nor the app could have known. Ambiguous: the pair is reported
    and the verdict is ``unknown`` unless another pair is invalid.

The counterexample is the earliest invalid pair (else the earliest
ambiguous one): both calls with their times, attempts and keys.
"""
from __future__ import annotations

from typing import Any, Iterable

from harness.checks.needs import PAID_CALLS
from harness.checks.paid_calls import PaidCall, paid_calls
from harness.checks.result import UNKNOWN, Result, invalid_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import INVOKE
from harness.history.history import History
from harness.history.snapshot import Snapshot

NAME = "no_double_billing"


def _groups(calls: Iterable[PaidCall]) -> list[list[PaidCall]]:
    by_key: dict[str, list[PaidCall]] = {}
    by_step: dict[tuple[str, str | None], list[PaidCall]] = {}
    for call in calls:
        if call.key is not None:
            by_key.setdefault(call.key, []).append(call)
        if call.job_id is not None:
            by_step.setdefault((call.job_id, call.step), []).append(call)
    return [g for g in (*by_key.values(), *by_step.values()) if len(g) > 1]


def _judge(first: PaidCall, second: PaidCall, provider_dedups: bool) -> tuple[bool | str, str]:
    """(valid, why) for one pair of billed calls, first started before second."""
    if first.key is not None and first.key == second.key:
        return False, "billed twice under the same idempotency key"
    if provider_dedups:
        return False, "the retry did not reuse the first call's idempotency key"
    if first.delivered and first.t_end is not None and first.t_end <= second.t_start:
        return False, "the first result had been delivered before the app paid again"
    return UNKNOWN, "the provider cannot deduplicate and the first result was never delivered"


def _pairs(calls: list[PaidCall]) -> Iterable[tuple[PaidCall, PaidCall]]:
    seen: set[tuple[str, str]] = set()
    for group in _groups(c for c in calls if c.billed):
        for first, second in zip(group, group[1:]):
            if (first.call_id, second.call_id) not in seen:
                seen.add((first.call_id, second.call_id))
                yield first, second


def _describe(pair: dict[str, Any]) -> str:
    a, b = pair["calls"]
    def one(c: dict[str, Any]) -> str:
        end = "" if c["ended_at"] is None else f"-{c['ended_at']:.3f}s"
        seen = "delivered" if c["delivered"] else "not delivered"
        return (f"{c['call_id']} (attempt {c['attempt']}, key {c['key']}, "
                f"at {c['at']:.3f}s{end}, {seen})")
    return f"job {a['job_id']} step {a['step']!r} billed twice: {one(a)} and {one(b)}; {pair['why']}"


def _duplicate_spend(history: History, pairs: list[dict[str, Any]]) -> tuple[float, str]:
    """Dollars the paid API billed for the second call of each pair (the money lost), and
    as text ("$0.00025")."""
    costs = {str(e.data.get("call_id")): float(e.data.get("cost_usd") or 0.0)
             for e in history.by_source(v.PAIDAPI) if e.name == v.CALL and e.type != INVOKE}
    spend = sum(costs.get(str(pair["calls"][1]["call_id"]), 0.0) for pair in pairs)
    return spend, "$" + (f"{spend:.6f}".rstrip("0").rstrip(".") if spend else "0")


@invariant(NAME, needs=(PAID_CALLS,))
def no_double_billing(history: History, snapshot: Snapshot | None,
                      provider_dedups: bool = True) -> Result:
    """No two billed calls share a key or a job+step (see the module docstring)."""
    calls = list(paid_calls(history))
    invalid, ambiguous = [], []
    for first, second in _pairs(calls):
        valid, why = _judge(first, second, provider_dedups)
        pair = {"job_id": first.job_id or second.job_id, "step": first.step, "why": why,
                "calls": [first.evidence(history.start), second.evidence(history.start)]}
        (invalid if valid is False else ambiguous).append(pair)
    billed = sum(c.billed for c in calls)
    if invalid:
        invalid.sort(key=lambda p: p["calls"][1]["at"])
        spend, dollars = _duplicate_spend(history, invalid)
        message = (f"{len(invalid)} duplicate billing(s), duplicate spend {dollars}; "
                   f"first: {_describe(invalid[0])}")
        return invalid_result(NAME, message, invalid, counterexample=invalid[0]["calls"],
                              ambiguous=ambiguous, billed_calls=billed,
                              duplicate_spend_usd=round(spend, 9))
    if ambiguous:
        ambiguous.sort(key=lambda p: p["calls"][1]["at"])
        return Result(NAME, UNKNOWN, f"{len(ambiguous)} ambiguous duplicate(s); first: "
                      f"{_describe(ambiguous[0])}", counterexample=ambiguous[0]["calls"],
                      details={"ambiguous": ambiguous, "billed_calls": billed})
    return valid_result(NAME, f"{billed} billed call(s), none billed twice", billed_calls=billed)
