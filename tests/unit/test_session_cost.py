"""What ``benchmarks/session_cost.py`` counts of processes no sample saw (a Postgres backend for one connection)."""
from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def session_cost(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports its neighbours by name
    return importlib.import_module("session_cost")


def test_a_reaped_childs_time_no_sample_saw_counts_for_its_parent_once(session_cost: ModuleType) -> None:
    harness, postmaster, short_lived, seen_once, alive = 1, 10, 11, 12, 13
    last = {harness: ("harness (pytest)", 2.0), postmaster: ("postgres", 1.0), seen_once: ("postgres", 0.1),
            alive: ("postgres", 0.2)}
    # the postmaster reaped two backends before its last sample: one a sample saw (0.1 of its 0.3 CPU-s),
    # one none did (0.4 CPU-s); a third is still alive, so its time is not in the postmaster's yet
    waited = {harness: 0.0, postmaster: 0.3 + 0.4, seen_once: 0.0, alive: 0.0}
    parent = {harness: 0, postmaster: harness, seen_once: postmaster, alive: postmaster}
    seen = {harness: 6, postmaster: 6, seen_once: 2, alive: 6}
    unseen = session_cost.unseen_children(last, waited, parent, seen)
    assert short_lived not in unseen
    assert unseen[postmaster] == pytest.approx(0.6)  # 0.7 reaped, less the 0.1 the samples counted already
    assert unseen[harness] == 0.0
    assert unseen[alive] == unseen[seen_once] == 0.0


def test_a_child_gone_after_its_parents_last_sample_is_not_taken_off_the_parent(session_cost: ModuleType) -> None:
    # the session ended: the postmaster's last sample came before the backend's, nothing of it was reaped then
    last = {10: ("postgres", 1.0), 11: ("postgres", 0.5)}
    unseen = session_cost.unseen_children(last, {10: 0.2, 11: 0.0}, {10: 1, 11: 10}, {10: 4, 11: 5})
    assert unseen[10] == pytest.approx(0.2)
