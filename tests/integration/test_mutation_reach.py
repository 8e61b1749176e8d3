"""A real baseline session records which scenarios reach which of refapp's mutant switches."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from harness.mutation_reach import ENV_VAR, read_windows, scenarios_reaching
from tests.common.children import run_cleanly

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration
HAPPY = "scenarios/test_happy_path.py::test_an_upload_is_processed_and_billed_once"
SWEEP = "scenarios/test_sweep.py::test_a_poison_row_is_counted_and_the_sweep_goes_on"


def test_a_sweep_only_switch_is_reached_by_the_sweep_scenario_alone(tmp_path):
    reach = tmp_path / "reach"
    reach.mkdir()
    env = {**{k: v for k, v in os.environ.items() if k != "REFAPP_MUTANT"}, ENV_VAR: str(reach)}
    done = run_cleanly([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", HAPPY, SWEEP,
                        f"--jobquake-artifacts={tmp_path / 'artifacts'}"],
                        cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert [w.nodeid for w in read_windows(reach)] == [HAPPY, SWEEP]
    found = scenarios_reaching(reach, [HAPPY, SWEEP], ["sweep-no-isolation", "idempotency-key-without-job",
                                                        "fresh-idempotency-key", "acks-early"])
    assert found["sweep-no-isolation"] == [SWEEP]  # the sweep's per-row isolation: no sweep in the happy path
    assert HAPPY in found["idempotency-key-without-job"]  # the paid call of every document
    assert HAPPY not in found["fresh-idempotency-key"]  # asked only for an attempt after the first: none here
    assert found["acks-early"] == [HAPPY, SWEEP]  # read at the worker's start: every test it serves
