"""effective_budget and query_budget."""
from __future__ import annotations

from harness.checks import UNKNOWN, effective_budget, query_budget
from harness.history.builder import HistoryBuilder


def budgets(effective: tuple[float | None, float | None] | None) -> HistoryBuilder:
    b = HistoryBuilder()
    b.budget(0.0, "declared", "tasks.summarize", 30.0, 36.0)
    if effective is not None:
        b.budget(0.1, "effective", "tasks.summarize", *effective)
    return b


def test_effective_equal_to_declared_is_valid():
    assert effective_budget(budgets((30.0, 36.0)).history(), None).valid is True
    assert effective_budget(budgets((30.0 + 1e-9, 36.0)).history(), None).valid is True


def test_effective_different_from_declared_is_invalid():
    result = effective_budget(budgets((300.0, 36.0)).history(), None)
    assert result.valid is False
    assert result.counterexample[0]["fields"] == ["soft"]


def test_missing_effective_limit_is_invalid_when_one_was_declared():
    assert effective_budget(budgets((None, 36.0)).history(), None).valid is False


def test_unread_effective_limits_and_no_declaration_are_unknown():
    assert effective_budget(budgets(None).history(), None).valid == UNKNOWN
    assert effective_budget(HistoryBuilder().history(), None).valid == UNKNOWN


def test_last_effective_reading_wins():
    b = budgets((300.0, 36.0))
    b.budget(0.5, "effective", "tasks.summarize", 30.0, 36.0)
    assert effective_budget(b.history(), None).valid is True


def scans(*batches: tuple[str, int, int]) -> HistoryBuilder:
    b = HistoryBuilder()
    for i, (table, count, items) in enumerate(batches):
        b.scan(i * 0.1, table, count, items)
    return b


def test_scans_within_budget_are_valid_including_exactly_at_the_bound():
    assert query_budget(scans(("jobs", 1, 50), ("jobs", 2, 2)).history(), None).valid is True


def test_scan_per_item_is_invalid():
    result = query_budget(scans(("jobs", 1, 50), ("jobs", 40, 20)).history(), None)
    assert result.valid is False
    assert result.counterexample[0]["per_item"] == 2.0


def test_empty_batch_costs_its_scans():
    assert query_budget(scans(("jobs", 1, 0)).history(), None).valid is True
    assert query_budget(scans(("jobs", 2, 0)).history(), None).valid is False


def test_per_table_budget():
    b = scans(("jobs", 3, 1), ("events", 1, 1))
    assert query_budget(b.history(), None, budget={"jobs": 3, "*": 1}).valid is True
    assert query_budget(b.history(), None, budget={"jobs": 2}).valid is False


def test_no_scans_is_unknown():
    assert query_budget(HistoryBuilder().history(), None).valid == UNKNOWN
