"""A message a fault destroyed while the sweeper was off: the correct app is not blamed, a missing sweeper is.

The schedule pauses refapp's sweeper (``defence_off``) across two broker
outages, the second pinned to a message waiting in the broker, which it
certainly takes with it. No broker redelivery can bring that job back;
only the sweeper, once it returns. On the correct app the run is valid (the
lost jobs are recorded ``in_transit`` and judged from the sweeper's return);
on ``no-sweeper`` the same jobs are still stuck past the bound after it.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from harness.nightly.schedule import Planned, Schedule
from tests.common.children import run_cleanly

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration

SWEEPER_OFF_ACROSS_OUTAGES = Schedule(seed=7, duration=16.0, rate=2.0, concurrency=4, job_bound=38.3, faults=(
    Planned(at=1.0, lasts=14.0, kind="defence_off", extends_bound=False,
            spec={"fault": "pause_service", "service": "sweeper", "defence_off": True}),
    Planned(at=3.0, lasts=3.0, kind="broker", spec={"fault": "broker_outage"}),
    Planned(at=6.0, lasts=5.0, kind="broker", spec={"fault": "broker_outage", "when": {"queued": {}}}),
))


def replay(tmp_path: Path, name: str, mutant: str | None) -> tuple[int, str, list[dict], dict]:
    stored = tmp_path / name / "stored"
    stored.mkdir(parents=True)
    (stored / "schedule.json").write_text(SWEEPER_OFF_ACROSS_OUTAGES.to_json())
    out = tmp_path / name / "out"
    env = {k: v for k, v in os.environ.items() if k != "REFAPP_MUTANT"}
    cmd = [sys.executable, "-m", "harness.cli", "nightly", "--replay", str(stored), "--no-shrink", "--out", str(out)]
    if mutant:
        cmd += ["--mutant", mutant]
    done = run_cleanly(cmd, cwd=ROOT, env=env, timeout=400)
    events = [json.loads(line) for line in (out / "run" / "history.jsonl").read_text().splitlines()]
    jobs = json.loads((out / "nightly.json").read_text())["jobs"]
    return done.returncode, done.stdout + done.stderr, events, jobs


def test_jobs_an_outage_lost_while_the_sweeper_was_off_wait_for_it_and_a_missing_sweeper_is_still_caught(tmp_path):
    code, output, events, jobs = replay(tmp_path, "correct", None)
    assert code == 0, output[-3000:]
    lost = [e for e in events if e["source"] == "nightly" and e["name"] == "in_transit"]
    assert lost and {e["data"]["kind"] for e in lost} <= {"broker_outage"}, output[-3000:]
    pinned = [e for e in events if e["name"] == "inject" and e["type"] == "ok" and "queued" in json.dumps(e["data"])]
    assert len(pinned) == 1 and pinned[0]["data"].get("waiting"), pinned  # the outage took a waiting message
    done = {e["job_id"] for e in events if e["source"] == "job" and e["data"].get("state") == "done"}
    assert {e["job_id"] for e in lost} <= done  # each finished once the sweeper was back
    assert jobs["in_transit"] == len({e["job_id"] for e in lost}) and jobs["stuck"] == 0

    code, output, _, _ = replay(tmp_path, "no-sweeper", "no-sweeper")
    assert code == 1 and "invalid  no_job_stuck" in output, output[-3000:]
