"""`pytest --jobquake-nightly=DURATION`: a nightly run as one test of a pytest session.

It passes on the correct app and fails on a mutant with the invariant's
counterexample, its report and its replay command.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.common.children import run_cleanly

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def pytest_nightly(tmp_path: Path, mutant: str | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REFAPP_MUTANT"}
    if mutant:
        env["REFAPP_MUTANT"] = mutant
    # a file of unit tests as the collection: -k keeps only the nightly
    cmd = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "-p", "no:cacheprovider", "-q",
           str(ROOT / "tests" / "unit" / "test_nightly_schedule.py"), "-k", "jobquake_nightly",
           f"--jobquake-artifacts={tmp_path}", *args]
    return run_cleanly(cmd, cwd=ROOT, env=env, timeout=400)


def test_the_nightly_test_passes_on_the_correct_app(tmp_path):
    done = pytest_nightly(tmp_path, None, "--jobquake-nightly=15s", "--jobquake-seed=11",
                          "--jobquake-nightly-faults=kill,latency")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:]
    assert (tmp_path / "nightly" / "seed-11" / "report.html").is_file()


def test_the_nightly_test_fails_on_a_mutant_with_the_counterexample(tmp_path):
    done = pytest_nightly(tmp_path, "sweep-no-isolation", "--jobquake-nightly=30s", "--jobquake-seed=3",
                          "--jobquake-nightly-faults=poison")
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout[-3000:]
    assert "sweep_complete" in done.stdout and "neither processed nor failed" in done.stdout, done.stdout[-3000:]
    assert f"jobquake nightly --replay {tmp_path / 'nightly' / 'seed-3'}" in done.stdout
