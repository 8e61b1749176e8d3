"""Crashing refapp's workers the hard way, for the scenarios that kill them mid-job."""
from __future__ import annotations

from typing import Any

from harness import Run
from harness.faults import KillWorker
from refapp.submit import job_id_for

MARGIN = 10.0  # seconds a wait may take on a busy machine


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


def kill_mid_job_and_lose_its_message(jq: Run, refapp: Any, documents: list[str], *, project: str,
                                      file: str = "report.pdf") -> str:
    """Attempt 1 is paying for document 0: kill every worker, flush the broker, let the call be answered.

    The dead worker's unacknowledged task is flushed with everything else, so
    only a sweeper can bring the job back; fresh workers are ready on return.
    Returns the job id.
    """
    job_id = job_id_for(project, file)
    gate = jq.paidapi.gate(job_id=job_id, step="doc-0.categorise")
    assert refapp.submit(documents, project=project, file=file) == job_id
    gate.wait(timeout=MARGIN)
    kills = kill_every_worker(jq)
    jq.stack.redis.reset()  # FLUSHALL
    gate.heal()  # the provider answers and bills; nobody is there to receive it
    assert_caught_mid_job(refapp, job_id)
    start_fresh_workers(kills)
    return job_id


def assert_caught_mid_job(refapp: Any, job_id: str, attempt: int = 1) -> None:
    """The kill landed while ``attempt`` was running: only a new attempt can finish the job now."""
    job = refapp.job(job_id)
    assert (job["state"], job["attempt"]) == ("running", attempt), job
