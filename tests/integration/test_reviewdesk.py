"""The Django example app (tests/reviewdesk), set up by `jobquake init` and its one TODO: its scenarios pass
on its code and each of its bugs is caught by an invariant.

They run as a user runs them, from the app's folder: ``jobquake mutants``,
whose first session is the scenarios with no bug switched on (every one must
pass, each with a valid verdict: schema by ``manage.py migrate``, workers
from Django's Celery settings, gunicorn and celery beat from its Procfile),
then one session per bug of the app's own catalogue (each must be caught,
by the invariant its scenario declares). A whole mutation matrix: the slow tier.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.common.matrix import baseline_counts, run_matrix

REVIEWDESK = Path(__file__).resolve().parents[1] / "reviewdesk"
SCENARIOS = 6
BUGS = 6

pytestmark = pytest.mark.integration


def test_the_django_apps_scenarios_pass_on_its_correct_code_and_catch_each_of_its_bugs(tmp_path):
    results, tail = run_matrix(REVIEWDESK, tmp_path / "mutants.json")
    passed, judged, valid, baseline = baseline_counts(REVIEWDESK)
    assert passed == judged == valid == SCENARIOS, baseline[-3000:]
    assert results["score"] == {"caught": BUGS, "total": BUGS}, tail
