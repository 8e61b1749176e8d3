"""A session that runs several mutants' tests in turn: one test per planned pair, grouped, each with its mutant."""
from __future__ import annotations

import json

import pytest

TESTS = '''
import os
import pytest

def test_plain(jobquake_mutant):
    assert os.environ["TOY_MUTANT"] == jobquake_mutant

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert not (n == 2 and os.environ["TOY_MUTANT"] == "b"), "fails with mutant b"

def test_unplanned():
    pass
'''
PLAN = {"env": "TOY_MUTANT", "groups": [
    {"mutant": "a", "nodeids": ["test_toy.py::test_plain", "test_toy.py::test_param[1]", "test_toy.py::test_param[2]"]},
    {"mutant": "b", "nodeids": ["test_toy.py::test_param[2]", "test_toy.py::test_plain"]},
]}


def test_each_planned_pair_is_a_test_of_its_own_grouped_by_mutant_with_its_outcome_recorded(pytester):
    pytester.makepyfile(test_toy=TESTS)
    (pytester.path / "plan.json").write_text(json.dumps(PLAN))
    result = pytester.runpytest_subprocess("-p", "harness.mutation_session", "--jobquake-mutant-plan=plan.json",
                                           "-v", "-p", "no:cacheprovider")
    ran = [line.split(" ", 1)[0] for line in result.stdout.lines if line.startswith("test_toy.py::")]
    assert ran == ["test_toy.py::test_plain[a]", "test_toy.py::test_param[1-a]", "test_toy.py::test_param[2-a]",
                   "test_toy.py::test_param[2-b]", "test_toy.py::test_plain[b]"]  # grouped by mutant, plan order
    result.assert_outcomes(passed=4, failed=1, deselected=2)  # test_param[1-b], test_unplanned

    rows = json.loads((pytester.path / "plan.outcomes.json").read_text())
    found = {(r["mutant"], r["nodeid"]): (r["test"], r["outcome"]) for r in rows}
    assert found == {
        ("a", "test_toy.py::test_plain"): ("test_toy.py::test_plain[a]", "passed"),
        ("a", "test_toy.py::test_param[1]"): ("test_toy.py::test_param[1-a]", "passed"),
        ("a", "test_toy.py::test_param[2]"): ("test_toy.py::test_param[2-a]", "passed"),
        ("b", "test_toy.py::test_param[2]"): ("test_toy.py::test_param[2-b]", "failed"),
        ("b", "test_toy.py::test_plain"): ("test_toy.py::test_plain[b]", "passed"),
    }
    assert all(r["seconds"] >= 0 for r in rows)


def test_without_a_plan_the_plugin_changes_nothing(pytester: pytest.Pytester):
    pytester.makepyfile(test_toy=TESTS.replace("(jobquake_mutant)", "()").replace(
        '    assert os.environ["TOY_MUTANT"] == jobquake_mutant\n', "    pass\n"))
    result = pytester.runpytest_subprocess("-p", "harness.mutation_session", "-p", "no:cacheprovider",
                                           "-k", "plain or unplanned or 1")
    result.assert_outcomes(passed=3, deselected=1)
