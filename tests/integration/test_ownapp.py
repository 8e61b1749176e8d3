"""The second app (tests/ownapp), set up only by `jobquake init`: its scenarios pass on its code and catch its bugs.

They run as a user runs them, from the app's folder: ``jobquake mutants``,
whose first session is the scenarios with no bug switched on (every one must
pass, each with a valid verdict), then one session per bug of the app's own
catalogue (each must be caught). A whole mutation matrix: the slow tier.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.common.matrix import baseline_counts, run_matrix

OWNAPP = Path(__file__).resolve().parents[1] / "ownapp"
SCENARIOS = 5
BUGS = 6

pytestmark = pytest.mark.integration


def test_the_second_apps_scenarios_pass_on_its_correct_code_and_catch_each_of_its_bugs(tmp_path):
    results, tail = run_matrix(OWNAPP, tmp_path / "mutants.json")
    passed, judged, valid, baseline = baseline_counts(OWNAPP)
    assert passed == judged == valid == SCENARIOS, baseline[-3000:]
    assert results["score"] == {"caught": BUGS, "total": BUGS}, tail
