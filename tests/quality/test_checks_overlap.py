"""no_overlapping_attempts: two attempts of one job alive at once."""
from __future__ import annotations

from harness.checks import no_overlapping_attempts
from harness.history.builder import HistoryBuilder


def test_sequential_attempts_are_valid():
    b = HistoryBuilder()
    b.state("j1", 0.0, "running", attempt=1)
    b.call("j1", 0.1, 0.5, attempt=1, client_gone=True)
    b.state("j1", 1.0, "queued", attempt=2)
    b.state("j1", 1.1, "running", attempt=2)
    b.state("j1", 2.0, "done", attempt=2)
    assert no_overlapping_attempts(b.history(), None).valid is True


def test_undelivered_call_of_a_killed_attempt_does_not_extend_it():
    b = HistoryBuilder()
    b.state("j1", 0.0, "running", attempt=1)
    b.call("j1", 0.1, 5.0, attempt=1, client_gone=True)  # the provider finished long after the kill
    b.state("j1", 1.0, "running", attempt=2)
    assert no_overlapping_attempts(b.history(), None).valid is True


def test_delivered_call_after_the_next_attempt_started_is_an_overlap():
    b = HistoryBuilder()
    b.state("j1", 0.0, "running", attempt=1)
    b.call("j1", 0.1, 5.0, attempt=1)
    b.state("j1", 1.0, "running", attempt=2)
    result = no_overlapping_attempts(b.history(), None)
    assert result.valid is False
    [violation] = result.counterexample
    assert violation["attempts"] == [1, 2]
    assert violation["spans"] == {"1": [0.0, 5.0], "2": [1.0, 1.0]}


def test_old_attempt_writing_its_state_late_is_an_overlap():
    b = HistoryBuilder()
    b.state("j1", 0.0, "running", attempt=1)
    b.state("j1", 1.0, "running", attempt=2)
    b.write("j1", 1.5, attempt=1)
    b.state("j1", 2.0, "done", attempt=2)
    assert no_overlapping_attempts(b.history(), None).valid is False


def test_back_to_back_attempts_touching_at_one_instant_are_valid():
    b = HistoryBuilder()
    b.state("j1", 0.0, "running", attempt=1)
    b.write("j1", 1.0, attempt=1)
    b.state("j1", 1.0, "running", attempt=2)
    assert no_overlapping_attempts(b.history(), None).valid is True


def test_empty_history_is_valid():
    assert no_overlapping_attempts(HistoryBuilder().history(), None).valid is True
