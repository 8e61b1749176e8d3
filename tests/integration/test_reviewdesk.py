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

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.common.children import run_cleanly

REVIEWDESK = Path(__file__).resolve().parents[1] / "reviewdesk"
SCENARIOS = 6
BUGS = 6

pytestmark = pytest.mark.integration


def test_the_django_apps_scenarios_pass_on_its_correct_code_and_catch_each_of_its_bugs(tmp_path):
    out = tmp_path / "mutants.json"
    baseline_out = REVIEWDESK / ".jobquake" / "mutants" / "none" / "pytest.out"  # where the matrix keeps it
    shutil.rmtree(baseline_out.parent, ignore_errors=True)  # an earlier run's output is no evidence of this one
    proc = run_cleanly([sys.executable, "-m", "harness.cli", "mutants", "--jobs", "2", "--out", str(out)],
                       cwd=REVIEWDESK, timeout=900)
    tail = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    results = json.loads(out.read_text())
    assert results["baseline"]["exit_code"] == 0, tail
    baseline = baseline_out.read_text()
    assert f"{SCENARIOS} passed" in baseline, baseline[-3000:]
    assert f"{SCENARIOS} scenario(s): {SCENARIOS} valid" in baseline, baseline[-3000:]
    assert results["score"] == {"caught": BUGS, "total": BUGS}, tail
