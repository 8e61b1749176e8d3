"""status_events_consistent: what users were told vs the final DB state."""
from __future__ import annotations

from harness.checks import UNKNOWN, status_events_consistent
from harness.history.builder import HistoryBuilder


def test_matching_terminal_events_are_valid_and_progress_events_ignored():
    b = HistoryBuilder()
    b.status("j1", 0.1, "running")
    b.status("j1", 1.0, "done")
    b.row("j1", "done")
    assert status_events_consistent(b.history(), b.snapshot()).valid is True


def test_telling_done_for_a_failed_job_is_invalid():
    b = HistoryBuilder()
    b.status("j1", 1.0, "done")
    b.row("j1", "failed", reason="timeout")
    result = status_events_consistent(b.history(), b.snapshot())
    assert result.valid is False
    assert result.counterexample[0] == {"job_id": "j1", "at": 0.0, "told": "done", "db_state": "failed",
                                        "why": "users were told 'done', the database ended with 'failed'"}


def test_event_for_a_job_without_row_is_invalid():
    b = HistoryBuilder()
    b.status("ghost", 1.0, "done")
    assert status_events_consistent(b.history(), b.snapshot()).valid is False


def test_silent_final_state_only_matters_when_required():
    b = HistoryBuilder()
    b.row("j1", "failed")
    silent = status_events_consistent(b.history(), b.snapshot())
    assert silent.valid == "unknown" and "no terminal status event" in silent.message
    result = status_events_consistent(b.history(), b.snapshot(), require_final_event=True)
    assert result.valid is False and "never told" in result.message


def test_no_snapshot_is_unknown():
    assert status_events_consistent(HistoryBuilder().history(), None).valid == UNKNOWN
