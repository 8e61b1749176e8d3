"""`jobquake nightly` end to end on refapp: a short valid run, its progress lines, its replay."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.nightly.schedule import Schedule
from tests.common.children import run_cleanly

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def nightly(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return run_cleanly([sys.executable, "-m", "harness.cli", "nightly", *args], cwd=ROOT, timeout=timeout)


def test_a_short_nightly_on_the_correct_app_is_valid_reports_progress_and_replays(tmp_path):
    out = tmp_path / "run"
    done = nightly("--duration", "15s", "--seed", "11", "--faults", "kill,latency", "--fault-every", "4s",
                   "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    progress = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert len(progress) >= 2 and "s / 15s" in progress[0] and "jobs " in progress[0] and "faults " in progress[0]
    assert "verdict: valid" in done.stdout
    schedule = Schedule.from_json((out / "schedule.json").read_text())
    assert schedule.seed == 11 and schedule.faults, "a schedule of faults was drawn and stored"
    data = json.loads((out / "nightly.json").read_text())
    assert data["exit_code"] == 0 and data["jobs"]["accepted"] > 0 and len(data["series"]) > 1
    assert all(f["injected"] for f in data["faults"]), data["faults"]
    assert "<svg" in (out / "report.html").read_text()

    again = nightly("--replay", str(out), "--no-shrink")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (out / "replay" / "schedule.json").read_bytes() == (out / "schedule.json").read_bytes()


def test_bad_input_is_exit_code_2_with_the_key_named(tmp_path):
    done = nightly("--duration", "5s", "--faults", "explode", "--out", str(tmp_path), timeout=60)
    assert done.returncode == 2 and "unknown fault kind 'explode'" in done.stderr
