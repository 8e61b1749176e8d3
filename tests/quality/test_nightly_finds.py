"""A 2-minute nightly finds each of three catalogued bugs of different kinds, with the invariant that names it.

``acks-early`` (a job lost with a killed worker: ``no_job_stuck``),
``fresh-idempotency-key`` (a retried paid call billed twice:
``no_double_billing``) and ``sweep-no-isolation`` (a sweep that stops at
a poison row: ``sweep_complete``). Each seed was chosen so that its
schedule reaches the bug; the job stream is slow enough (2 jobs/s) that a
machine busy with other work does not drown the lost job in a backlog. The
correct app is valid under the same schedules (``benchmarks/nightly_mutants.py``
runs each shrunk scenario on it).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.common.children import run_cleanly

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration

ALL_KINDS = "kill,hang,pool,pause,defence_off,latency,poison"
CASES = {  # mutant -> (nightly arguments, the invariant that must fail)
    # a kill mid-job while the sweeper is paused, and the sweeper stays paused past the job bound after it
    "acks-early": (["--seed", "308", "--faults", "kill,defence_off", "--rate", "2/s"], "no_job_stuck"),
    "fresh-idempotency-key": (["--seed", "159", "--faults", "kill,hang,pool,pause,defence_off,latency",
                               "--rate", "2/s"], "no_double_billing"),
    "sweep-no-isolation": (["--seed", "25", "--faults", ALL_KINDS, "--rate", "2/s"], "sweep_complete"),
}


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_a_two_minute_nightly_finds_the_mutant(mutant, tmp_path):
    args, invariant = CASES[mutant]
    env = {**os.environ, "REFAPP_MUTANT": mutant}
    done = run_cleanly([sys.executable, "-m", "harness.cli", "nightly", "--duration", "2m", *args, "--no-shrink",
                           "--out", str(tmp_path)], cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    results = json.loads((tmp_path / "nightly.json").read_text())["verdict"]["results"]
    assert invariant in {r["name"] for r in results if r["valid"] is False}, done.stdout[-3000:]
