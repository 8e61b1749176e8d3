"""no_effect_from_dead_attempt: fenced writes and paid calls after death."""
from __future__ import annotations

from harness.checks import no_effect_from_dead_attempt
from harness.history.builder import HistoryBuilder


def killed_attempt() -> HistoryBuilder:
    b = HistoryBuilder()
    b.state("j1", 0.0, "running", attempt=1)
    b.write("j1", 0.5, attempt=1)
    b.dead("j1", 1.0, attempt=1)
    b.state("j1", 1.1, "running", attempt=2)
    b.write("j1", 1.5, attempt=2)
    return b


def test_effects_before_death_and_from_the_next_attempt_are_valid():
    assert no_effect_from_dead_attempt(killed_attempt().history(), None).valid is True


def test_refused_write_after_death_is_the_fence_working():
    b = killed_attempt()
    b.write("j1", 1.2, attempt=1, refused=True)
    assert no_effect_from_dead_attempt(b.history(), None).valid is True


def test_accepted_write_after_death_is_invalid():
    b = killed_attempt()
    b.write("j1", 1.2, attempt=1, table="results")
    result = no_effect_from_dead_attempt(b.history(), None)
    assert result.valid is False
    [effect] = result.counterexample
    assert (effect["job_id"], effect["attempt"], effect["table"]) == ("j1", 1, "results")
    assert (effect["at"], effect["dead_at"], effect["declared_by"]) == (1.2, 1.0, "sweeper")


def test_paid_call_started_after_death_is_invalid():
    b = killed_attempt()
    b.call("j1", 1.3, 1.4, attempt=1)
    result = no_effect_from_dead_attempt(b.history(), None)
    assert result.valid is False and result.counterexample[0]["call_id"] == "call-1"


def test_call_started_before_death_and_ending_after_is_valid():
    b = killed_attempt()
    b.call("j1", 0.8, 3.0, attempt=1, client_gone=True)
    assert no_effect_from_dead_attempt(b.history(), None).valid is True


def test_earliest_effect_is_the_counterexample():
    b = killed_attempt()
    b.write("j1", 1.8, attempt=1)
    b.call("j1", 1.3, 1.4, attempt=1)
    result = no_effect_from_dead_attempt(b.history(), None)
    assert result.counterexample[0]["at"] == 1.3
    assert len(result.details["violations"]) == 2


def test_a_history_without_a_dead_attempt_is_unknown():
    result = no_effect_from_dead_attempt(HistoryBuilder().history(), None)
    assert result.valid == "unknown" and "no attempt was declared dead" in result.message
