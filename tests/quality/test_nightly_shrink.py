"""Shrinking finds the bug: a nightly schedule that fails on a catalogued mutant shrinks to at most
two faults, and the printed scenario fails on the mutant and passes on the correct app.

The mutant is ``acks-early`` (BUGS.md): Celery acknowledges a task before it
runs, so a worker killed mid-job loses it. The sweeper would rescue the job,
so the schedule pauses it (``defence_off``) and a kill at a failpoint lands
while it is paused; broker redelivery alone must finish the job within the
bound, and with the bug it cannot. A latency toxic is in the schedule too,
to be shrunk away. (The kill's heal, a fresh worker, takes 5 to 10 s here;
the job bound counts from it, so the stuck job is seen well before 40 s.)

The mutant ``no-sweeper`` is caught by the shape shrinking prints for it: a
broker outage pinned to a message waiting in the broker (``when={"queued":
{}}``) fails the printed scenario on the mutant and passes on the correct app.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.nightly.scenario_writer import scenario_source
from harness.nightly.schedule import Planned, Schedule
from tests.common.children import run_cleanly

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration

SCHEDULE = Schedule(seed=31, duration=50.0, rate=5.0, concurrency=4, job_bound=15.0, faults=(
    Planned(at=1.0, lasts=48.0, kind="defence_off", spec={"fault": "pause_service", "service": "sweeper",
                                                      "defence_off": True},
            extends_bound=False),
    Planned(at=3.0, lasts=5.0, kind="kill",  # the kill may wait up to 5 s for a job at the failpoint
            spec={"fault": "kill_worker", "when": {"at_failpoint": {"name": "task.before_paid_call"}}}),
    Planned(at=40.0, lasts=2.0, kind="latency",
            spec={"fault": "network_toxic", "proxy": "paidapi", "type": "latency", "latency": 100}),
))


def run(cmd: list[str], mutant: str | None, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REFAPP_MUTANT"}
    if mutant:
        env["REFAPP_MUTANT"] = mutant
    return run_cleanly(cmd, cwd=ROOT, env=env, timeout=timeout)


def test_a_failing_schedule_shrinks_to_a_scenario_that_catches_the_mutant(tmp_path):
    stored = tmp_path / "stored"
    stored.mkdir()
    (stored / "schedule.json").write_text(SCHEDULE.to_json())
    out = tmp_path / "nightly"
    done = run([sys.executable, "-m", "harness.cli", "nightly", "--replay", str(stored), "--out", str(out),
                "--shrink-budget", "4m"], "acks-early", timeout=900)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "invalid  no_job_stuck" in done.stdout
    minimal = Schedule.from_json((out / "minimal" / "schedule.json").read_text())
    assert 1 <= len(minimal.faults) <= 2, minimal
    assert "kill" in {f.kind for f in minimal.faults}
    [scenario] = (out / "minimal").glob("test_*.py")
    assert "reruns" in done.stdout and scenario.read_text() in done.stdout  # printed, ready to paste

    pytest_cmd = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), str(scenario), "-q",
                  "-p", "no:cacheprovider", f"--jobquake-artifacts={tmp_path / 'artifacts'}"]
    on_mutant = run(pytest_cmd, "acks-early", timeout=300)
    assert on_mutant.returncode == 1 and "no_job_stuck" in on_mutant.stdout, on_mutant.stdout[-3000:]
    on_correct = run(pytest_cmd, None, timeout=300)
    assert on_correct.returncode == 0, on_correct.stdout[-3000:]


# no-sweeper's shape as shrinking prints it: a broker outage (workers that lose the broker under a task
# quit and are restarted, the relay sends what it held at once: a backlog), then an outage pinned to a
# message waiting in the broker, which it certainly takes with it. Only the sweeper can bring that job back.
OUTAGES = Schedule(seed=7, duration=16.0, rate=2.0, concurrency=4, job_bound=38.3, faults=(
    Planned(at=3.0, lasts=3.0, kind="broker", spec={"fault": "broker_outage"}),
    Planned(at=6.0, lasts=5.0, kind="broker", spec={"fault": "broker_outage", "when": {"queued": {}}}),
))


def test_a_printed_outage_pinned_to_a_waiting_message_catches_no_sweeper(tmp_path):
    scenario = tmp_path / "test_outages.py"
    scenario.write_text(scenario_source(OUTAGES, invariant="no_job_stuck", message="a job lost with its message"))
    pytest_cmd = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), str(scenario), "-q",
                  "-p", "no:cacheprovider", f"--jobquake-artifacts={tmp_path / 'artifacts'}"]
    on_mutant = run(pytest_cmd, "no-sweeper", timeout=300)
    assert on_mutant.returncode == 1 and "no_job_stuck" in on_mutant.stdout, on_mutant.stdout[-3000:]
    [history] = (tmp_path / "artifacts").rglob("history.jsonl")
    taken = [line for line in history.read_text().splitlines()
             if '"name":"inject"' in line and '"queued"' in line and '"type":"ok"' in line]
    assert len(taken) == 1 and '"waiting":' in taken[0]  # the pinned outage happened, with a message waiting
    on_correct = run(pytest_cmd, None, timeout=300)
    assert on_correct.returncode == 0, on_correct.stdout[-3000:]
