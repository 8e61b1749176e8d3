"""Invariant: a batch's work per item stays within the budget the app declares, on every table.

A static table read for every row, a duplicate check that searches a whole
table per row, a job row re-read inside the loop: each costs one more
statement per item, invisible in the job's outcome and plain in what the
database ran. ``query_budget`` judges the tables a scenario names; this
judges every table of the app, named by nobody: an N+1 on a reference table
is as real as one on the job table.

**Evidence.** ``query work`` events (``harness.work.TableWork``): for one
batch, per table, the statements that read or wrote it as
``pg_stat_statements`` counted them (background polling taken out) and the
batch's items; and the app's budgets, ``queries_per_item`` in what its
config ``limits`` returns: ``{table: statements per item}`` with ``"*"``
for every table it does not name (a table the app reads per item only
through a cache, or not at all, keeps a budget well below one).

**Rule.** For each table, statements / items ≤ its budget. ``unknown``
without a ``work`` event or without declared budgets.
"""
from __future__ import annotations

from typing import Any

from harness.checks.end_to_end import declared_limits
from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, valid_result
from harness.checks.runner import invariant
from harness.history.snapshot import Snapshot
from harness.history import vocabulary as v
from harness.history.history import History

NAME = "work_per_item"
BUDGETS = "queries_per_item"  # key of the app's declared limits


def _samples(history: History, snapshot: Snapshot | None) -> Missing | None:
    if history.by_source(v.QUERY, name=v.WORK):
        return None
    return Missing("no batch's work was counted (harness.work.TableWork)")


def _budgets(history: History, snapshot: Snapshot | None) -> Missing | None:
    if declared_limits(history).get(BUDGETS):
        return None
    return Missing("the app declared no per-item budgets (queries_per_item in config limits)")


WORK_SAMPLES = Need("work_samples", "statements per table for a batch of items, every table counted", _samples)
ITEM_BUDGETS = Need("item_budgets", "the app's declared statements per item, per table", _budgets)


def _over(event: Any, budgets: dict[str, float], history: History) -> dict[str, Any] | None:
    table = str(event.data.get("table"))
    budget = budgets.get(table, budgets.get("*"))
    items, queries = int(event.data.get("items") or 0), float(event.data.get("queries") or 0.0)
    per_item = queries / max(items, 1)
    if budget is None or per_item <= budget:
        return None
    return {"table": table, "at": history.relative(event.t), "queries": queries, "items": items,
            "per_item": round(per_item, 3), "budget": budget, "background": event.data.get("background"),
            "job_id": event.job_id}


@invariant(NAME, needs=(WORK_SAMPLES, ITEM_BUDGETS))
def work_per_item(history: History, snapshot: Snapshot | None) -> Result:
    """Every table's statements per item of a batch are within the app's declared budget."""
    budgets = dict(declared_limits(history)[BUDGETS])
    samples = history.by_source(v.QUERY, name=v.WORK)
    violations = [found for event in samples if (found := _over(event, budgets, history)) is not None]
    if violations:
        violations.sort(key=lambda f: -f["per_item"] / max(f["budget"], 1e-9))
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} table(s) over their per-item budget; worst: {f['table']} "
                              f"took {f['queries']:g} statements for {f['items']} item(s) ({f['per_item']}/item, "
                              f"budget {f['budget']:g})", violations, budgets=budgets)
    tables = sorted({str(e.data.get("table")) for e in samples})
    return valid_result(NAME, f"{len(tables)} table(s) within their per-item budgets over "
                        f"{len({e.job_id for e in samples})} batch(es)", tables=tables, budgets=budgets)
