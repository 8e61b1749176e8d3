"""The third app (tests/recapapp), attached by `jobquake init` and its TODOs: its scenarios pass on its code.

They run as a user runs them, from the app's folder, in a pytest of their
own. That each of its bugs is caught by an invariant is the mutation
matrix's job (``jobquake mutants`` in that folder: no scenario declares a
catch, so it runs every scenario against every bug; CI runs it).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.common.children import run_cleanly

APP = Path(__file__).resolve().parents[1] / "recapapp"
SCENARIOS = 5

pytestmark = pytest.mark.integration


def test_the_third_apps_scenarios_pass_on_its_correct_code(tmp_path):
    proc = run_cleanly([sys.executable, "-m", "pytest", "scenarios", "-p", "no:cacheprovider", "-q",
                        f"--jobquake-artifacts={tmp_path / 'artifacts'}"], cwd=APP, timeout=900)
    tail = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    assert f"{SCENARIOS} passed" in proc.stdout, tail
    assert f"{SCENARIOS} scenario(s): {SCENARIOS} valid" in proc.stdout, tail
