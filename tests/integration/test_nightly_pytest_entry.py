"""`pytest --jobquake-nightly=DURATION`: a nightly run as one test of a pytest session.

It passes on the correct app, and its schedule replayed on a mutant catches
it; on a mutant it fails with the invariant's counterexample, its report and
its replay command.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.common.children import run_cleanly

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def _without_mutant() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "REFAPP_MUTANT"}


def pytest_nightly(tmp_path: Path, mutant: str | None, *args: str) -> subprocess.CompletedProcess:
    env = _without_mutant()
    if mutant:
        env["REFAPP_MUTANT"] = mutant
    # a file of unit tests as the collection: -k keeps only the nightly
    cmd = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "-p", "no:cacheprovider", "-q",
           str(ROOT / "tests" / "unit" / "test_nightly_schedule.py"), "-k", "jobquake_nightly",
           f"--jobquake-artifacts={tmp_path}", *args]
    return run_cleanly(cmd, cwd=ROOT, env=env, timeout=400)


def test_the_nightly_test_passes_on_the_correct_app_and_its_schedule_replayed_catches_a_mutant(tmp_path):
    """A minute of every fault kind but poison is valid on refapp; the same seeded schedule replayed
    on ``fresh-idempotency-key`` is invalid (its kills land after a paid call, the retry pays again)."""
    done = pytest_nightly(tmp_path, None, "--jobquake-nightly=60s", "--jobquake-seed=159",
                          "--jobquake-nightly-faults=kill,hang,pool,pause,defence_off,latency")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:]
    recorded = tmp_path / "nightly" / "seed-159"
    assert (recorded / "report.html").is_file()

    replayed = run_cleanly([sys.executable, "-m", "harness.cli", "nightly", "--replay", str(recorded), "--no-shrink",
                            "--mutant", "fresh-idempotency-key", "--out", str(tmp_path / "replay")],
                           cwd=ROOT, env=_without_mutant(), timeout=400)
    assert replayed.returncode == 1, replayed.stdout[-3000:] + replayed.stderr[-2000:]
    results = json.loads((tmp_path / "replay" / "nightly.json").read_text())["verdict"]["results"]
    assert "no_double_billing" in {r["name"] for r in results if r["valid"] is False}, replayed.stdout[-3000:]


def test_the_nightly_test_fails_on_a_mutant_with_the_counterexample(tmp_path):
    done = pytest_nightly(tmp_path, "sweep-no-isolation", "--jobquake-nightly=30s", "--jobquake-seed=3",
                          "--jobquake-nightly-faults=poison")
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout[-3000:]
    assert "sweep_complete" in done.stdout and "neither processed nor failed" in done.stdout, done.stdout[-3000:]
    assert f"jobquake nightly --replay {tmp_path / 'nightly' / 'seed-3'}" in done.stdout
