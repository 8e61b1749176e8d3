"""The Django example app (tests/reviewdesk), set up by `jobquake init` and its one TODO: its scenarios pass.

They run as a user runs them, from the app's folder, in a pytest of their
own: schema by ``manage.py migrate``, workers from Django's Celery settings,
gunicorn and celery beat from its Procfile. That each of its bugs is caught
is the mutation matrix's job (``jobquake mutants`` in that folder; CI runs it).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.common.children import run_cleanly

REVIEWDESK = Path(__file__).resolve().parents[1] / "reviewdesk"
SCENARIOS = 6

pytestmark = pytest.mark.integration


def test_the_django_apps_scenarios_pass_on_its_correct_code(tmp_path):
    proc = run_cleanly([sys.executable, "-m", "pytest", "scenarios", "-p", "no:cacheprovider", "-q",
                        f"--jobquake-artifacts={tmp_path / 'artifacts'}"], cwd=REVIEWDESK, timeout=600)
    tail = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    assert f"{SCENARIOS} passed" in proc.stdout, tail
    assert f"{SCENARIOS} scenario(s): {SCENARIOS} valid" in proc.stdout, tail
