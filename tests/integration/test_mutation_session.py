"""Several of refapp's mutants in one real pytest session: each group's app processes carry its own mutant."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import find_pyproject, resolve
from harness.mutation import MutationMatrix
from harness.mutation_full import NOT_APP_INVARIANTS
from harness.mutation_plan import Session, run_session
from harness.mutation_session import FirstCatch

ROOT = Path(__file__).resolve().parents[2]
POISON = "scenarios/test_sweep.py::test_a_poison_row_is_counted_and_the_sweep_goes_on"
DEADLINE = "scenarios/test_sweep.py::test_the_deadline_stops_a_slow_sweep_which_records_how_far_it_got"
pytestmark = pytest.mark.integration


def test_the_group_in_the_middle_alone_is_caught_so_each_group_ran_with_its_own_mutant(tmp_path):
    """sweep-no-isolation stops the sweep at the poison row (sweep_complete); the mutants before and
    after it do not touch that path. Had the sweeper kept the first group's mutant, the middle group
    would pass; had it kept the middle one's, the last would fail."""
    order = ["sweep-shared-transaction", "sweep-no-isolation", "fresh-idempotency-key"]
    matrix = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, jobs=1, out=tmp_path)
    found = run_session(matrix, Session(order, shared=True), {name: [POISON] for name in order}, "shared-1")
    assert set(found) == set(order)
    caught = found["sweep-no-isolation"]
    assert caught.failed == [POISON] and "sweep_complete" in caught.violated[POISON], caught
    for name in ("sweep-shared-transaction", "fresh-idempotency-key"):
        assert found[name].failed == [] and found[name].violated[POISON] == [], found[name]
        assert found[name].exit_code == 0 and found[name].seconds > 0
    output = (tmp_path / "shared-1" / "pytest.out").read_text()
    assert "1 failed, 2 passed" in output, output[-3000:]
    assert f"replay: REFAPP_MUTANT=sweep-no-isolation pytest {POISON!r} --jobquake-seed=" in output  # runs alone


def test_with_first_catch_a_caught_mutants_later_scenarios_are_not_run_and_the_next_group_runs_on(tmp_path):
    """sweep-no-isolation is caught by the poison-row scenario (sweep_complete): its second scenario is
    left out before its setup; fresh-idempotency-key, after it, is not caught there and runs both."""
    matrix = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, jobs=1, out=tmp_path)
    order = ["sweep-no-isolation", "fresh-idempotency-key"]
    selected = {"sweep-no-isolation": [POISON, DEADLINE], "fresh-idempotency-key": [POISON, DEADLINE]}
    found = run_session(matrix, Session(order, shared=True), selected, "shared-1",
                        FirstCatch({}, sorted(NOT_APP_INVARIANTS)))
    caught = found["sweep-no-isolation"]
    assert caught.failed == [POISON] and "sweep_complete" in caught.violated[POISON], caught
    assert caught.not_run == [DEADLINE]
    other = found["fresh-idempotency-key"]
    assert other.failed == [] and other.not_run == [] and sorted(other.violated) == sorted([POISON, DEADLINE])
    output = (tmp_path / "shared-1" / "pytest.out").read_text()
    assert "1 failed, 2 passed, 1 skipped" in output, output[-3000:]
