"""sweep_complete: every eligible row handled, truthful summary, run ended."""
from __future__ import annotations

from harness.checks import UNKNOWN, sweep_complete
from harness.history.builder import HistoryBuilder

ROWS = ["r1", "r2", "r3"]


def swept(**kwargs) -> HistoryBuilder:
    b = HistoryBuilder()
    b.sweep(1.0, **{"eligible": ROWS, "processed": ["r1", "r2"], "failed": ["r3"], **kwargs})
    return b


def test_complete_sweep_with_a_poison_row_counted_as_failed_is_valid():
    assert sweep_complete(swept().history(), None).valid is True


def test_vanished_row_is_invalid():
    result = sweep_complete(swept(failed=[], summary={"processed": 2, "failed": 0}).history(), None)
    assert result.valid is False
    assert "1 eligible row(s) neither processed nor failed: r3" in result.message


def test_lying_summary_is_invalid():
    result = sweep_complete(swept(summary={"processed": 3, "failed": 0}).history(), None)
    assert result.valid is False
    assert "summary says 3 processed" in result.message


def test_run_that_did_not_end_is_invalid():
    result = sweep_complete(swept(state="running").history(), None)
    assert result.valid is False and "did not end" in result.message


def test_last_report_of_a_run_wins():
    b = swept(state="running", processed=[], failed=[])
    b.sweep(2.0, eligible=ROWS, processed=ROWS, failed=[])
    assert sweep_complete(b.history(), None).valid is True


def test_no_sweep_is_unknown():
    assert sweep_complete(HistoryBuilder().history(), None).valid == UNKNOWN
