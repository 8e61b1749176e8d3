"""Invariants about budgets: time limits in force, and table scans per item.

``effective_budget``: for every task with a ``budget declared`` event, the
last ``budget effective`` event (what the running worker actually enforces,
e.g. read with ``celery inspect``) has the same ``soft`` and ``hard``
limits, within ``rel_tol`` / ``abs_tol``. A declared task whose effective
limits were never read gives ``unknown``; no declaration at all gives
``unknown`` too (nothing was checked).

``query_budget``: every ``query scan`` event ran at most ``budget`` table
scans per item (``scans / max(items, 1)``; a batch of zero items still
costs its scans). ``budget`` is a number, or a mapping table -> number
with an optional ``"*"`` default.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from harness.checks.result import UNKNOWN, Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History
from harness.history.snapshot import Snapshot

EFFECTIVE_NAME = "effective_budget"
QUERY_NAME = "query_budget"


def _last_by_task(events: tuple[Event, ...]) -> dict[str, Event]:
    return {str(e.data.get("task")): e for e in events}


def _same(a: Any, b: Any, rel_tol: float, abs_tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=abs_tol)


@invariant(EFFECTIVE_NAME)
def effective_budget(history: History, snapshot: Snapshot | None,
                     rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> Result:
    """Each task's effective soft/hard limits equal the declared ones."""
    declared = _last_by_task(history.by_source(v.BUDGET, name=v.DECLARED))
    effective = _last_by_task(history.by_source(v.BUDGET, name=v.EFFECTIVE))
    if not declared:
        return unknown_result(EFFECTIVE_NAME, "no budget was declared: nothing to compare")
    violations, unread = [], []
    for task, want in declared.items():
        got = effective.get(task)
        if got is None:
            unread.append(task)
            continue
        wrong = [k for k in ("soft", "hard")
                 if not _same(want.data.get(k), got.data.get(k), rel_tol, abs_tol)]
        if wrong:
            violations.append({"task": task, "at": history.relative(got.t), "fields": wrong,
                               "declared": {k: want.data.get(k) for k in ("soft", "hard")},
                               "effective": {k: got.data.get(k) for k in ("soft", "hard")}})
    if violations:
        f = violations[0]
        return invalid_result(EFFECTIVE_NAME, f"{len(violations)} task(s) run with other limits than "
                              f"declared; first: {f['task']} declared {f['declared']}, effective "
                              f"{f['effective']}", violations, unread=unread)
    if unread:
        return Result(EFFECTIVE_NAME, UNKNOWN, f"effective limits never read for {len(unread)} "
                      f"task(s): {', '.join(unread)}", details={"unread": unread})
    return valid_result(EFFECTIVE_NAME, f"{len(declared)} task(s) run with their declared limits",
                        tasks=len(declared))


def _budget_for(table: str, budget: float | Mapping[str, float]) -> float | None:
    if isinstance(budget, Mapping):
        return budget.get(table, budget.get("*"))
    return float(budget)


@invariant(QUERY_NAME)
def query_budget(history: History, snapshot: Snapshot | None,
                 budget: float | Mapping[str, float] = 1.0) -> Result:
    """Table scans per item stay within the budget."""
    scans = history.by_source(v.QUERY, name=v.SCAN)
    if not scans:
        return unknown_result(QUERY_NAME, "no query scan was recorded")
    violations = []
    for event in scans:
        table = str(event.data.get("table"))
        limit = _budget_for(table, budget)
        count, items = int(event.data.get("scans") or 0), int(event.data.get("items") or 0)
        per_item = count / max(items, 1)
        if limit is not None and per_item > limit:
            violations.append({"table": table, "at": history.relative(event.t), "scans": count,
                               "items": items, "per_item": round(per_item, 3), "budget": limit,
                               "job_id": event.job_id})
    if violations:
        f = violations[0]
        return invalid_result(QUERY_NAME, f"{len(violations)} batch(es) over the query budget; first: "
                              f"{f['scans']} scans of {f['table']} for {f['items']} item(s) at "
                              f"{f['at']:.3f}s ({f['per_item']}/item, budget {f['budget']})", violations)
    return valid_result(QUERY_NAME, f"{len(scans)} batch(es) within the query budget", batches=len(scans))
