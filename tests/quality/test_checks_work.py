"""``work_per_item``: every table's statements per item within the app's declared budget, no table named."""
from __future__ import annotations

from harness.checks import UNKNOWN, run_checks
from harness.checks.result import Result
from harness.checks.work import NAME, work_per_item
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import OK

BUDGETS = {"*": 0.5, "jobs": 6, "items": 3}
ITEMS = 40


def verdict(b: HistoryBuilder) -> Result:
    return run_checks([work_per_item], b.history(), None)[NAME]


def batch(budgets: dict[str, float] | None = BUDGETS, **queries: float) -> HistoryBuilder:
    b = HistoryBuilder()
    if budgets is not None:
        b.event(v.BUDGET, OK, v.LIMITS, 0.0, chains={}, step_blocked=None, queries_per_item=budgets)
    for table, count in {"jobs": 160, "items": 80, "categories": 1, **queries}.items():
        b.event(v.QUERY, OK, v.WORK, 2.0, "job-1", table=table, queries=count, items=ITEMS, background=3.0)
    return b


def test_a_batch_within_every_tables_budget_is_valid():
    result = verdict(batch())
    assert result.valid is True, result.message
    assert result.details["tables"] == ["categories", "items", "jobs"]


def test_a_table_nobody_named_read_once_per_item_is_invalid():
    """A reference table looked up per row: the default budget of every table not declared catches it."""
    result = verdict(batch(ledger_entries=ITEMS))
    assert result.valid is False
    first = result.counterexample[0]
    assert (first["table"], first["per_item"], first["budget"]) == ("ledger_entries", 1.0, 0.5)


def test_the_job_table_has_its_own_budget_and_an_n_plus_one_there_counts_too():
    result = verdict(batch(jobs=ITEMS * 7))
    assert result.valid is False and result.counterexample[0]["table"] == "jobs"


def test_without_declared_budgets_or_without_a_counted_batch_it_is_unknown():
    assert verdict(batch(budgets=None)).valid == UNKNOWN
    b = HistoryBuilder()
    b.event(v.BUDGET, OK, v.LIMITS, 0.0, chains={}, step_blocked=None, queries_per_item=BUDGETS)
    assert verdict(b).valid == UNKNOWN
