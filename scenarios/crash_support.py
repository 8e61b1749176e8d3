"""Crashing refapp's workers the hard way, for the scenarios that kill them mid-job."""
from __future__ import annotations

from typing import Any

from harness import Run
from harness.faults import KillWorker


def kill_every_worker(jq: Run) -> list[KillWorker]:
    """SIGKILL each worker's whole process group (main process and pool children), now.

    Used when a paid-API gate holds a job's call: the provider cannot tell
    which worker made it, so every one dies. Healing a returned fault starts
    a fresh worker in the dead one's place.
    """
    return [jq.faults.kill_worker(worker.name) for worker in jq.stack.workers.workers]


def start_fresh_workers(kills: list[KillWorker]) -> None:
    """Heal the kills: a fresh worker takes each dead one's place (and is ready on return)."""
    for kill in kills:
        kill.heal()


def assert_caught_mid_job(refapp: Any, job_id: str, attempt: int = 1) -> None:
    """The kill landed while ``attempt`` was running: only a new attempt can finish the job now."""
    job = refapp.job(job_id)
    assert (job["state"], job["attempt"]) == ("running", attempt), job
