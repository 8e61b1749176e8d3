"""The third app (tests/recapapp), attached by `jobquake init` and its TODOs: its scenarios pass on its
code, and every one of its bugs is caught by an invariant.

They run as a user runs them, from the app's folder: ``jobquake mutants``.
No scenario of the app declares a catch (init writes none), so the command
runs the full matrix: the scenarios with no bug switched on (every one must
pass), then every scenario against every bug. A whole mutation matrix: the
slow tier.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.common.children import run_cleanly

APP = Path(__file__).resolve().parents[1] / "recapapp"
BUGS = 6

pytestmark = pytest.mark.integration


def test_the_third_apps_scenarios_pass_on_its_correct_code_and_invariants_catch_each_of_its_bugs(tmp_path):
    out = tmp_path / "mutants.json"
    proc = run_cleanly([sys.executable, "-m", "harness.cli", "mutants", "--jobs", "2", "--out", str(out)],
                       cwd=APP, timeout=1800)
    tail = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "no scenario declares a catch" in proc.stdout, tail  # the full matrix, and the line saying so
    results = json.loads(out.read_text())
    assert results["baseline"]["exit_code"] == 0 and not results["baseline"]["failed"], tail
    assert results["score"] == {"caught": BUGS, "caught_by_invariants": BUGS, "total": BUGS}, tail
    assert proc.returncode == 0, tail
