"""The steady stream of jobs a nightly run submits: paced, concurrent, each recorded in the history.

The app's own submit is a ``module:callable`` from config
(``[tool.jobquake.nightly] submit``), called as ``submit(values, job)``
with the stack's values (``api_url``, ``database_url``...) and a
:class:`JobSpec`; it returns the job id of an accepted submission, ``None``
for one the app refused, and raises when the answer was lost. The harness
records ``submit invoke`` before the call and ``ok`` / ``fail`` / ``info``
after it, as the scenarios' clients do, so the same checkers judge both.

Each job's content comes from the seed and its index alone, so a replay
submits the same jobs in the same order.
"""
from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.history import Record

SubmitFn = Callable[[dict[str, Any], "JobSpec"], "str | None"]

WORDS = ("invoice from ACME, payable in 30 days", "hotel receipt, paid, thank you",
         "contract renewal for the warehouse lease", "taxi receipt, airport to office",
         "purchase order 4411 for printer toner", "reminder: second notice, invoice 981")


@dataclass(frozen=True)
class JobSpec:
    """One job of the workload: who submits what (the same for the same seed and index)."""

    index: int
    project: str
    file: str
    documents: tuple[str, ...]

    @classmethod
    def draw(cls, seed: int, index: int) -> "JobSpec":
        rng = random.Random(f"jobquake-job:{seed}:{index}")
        documents = tuple(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        return cls(index=index, project=f"nightly-{seed}", file=f"upload-{index:06d}.pdf", documents=documents)


@dataclass
class WorkloadStats:
    """What the workload did so far (read by the progress display)."""

    submitted: int = 0
    accepted: int = 0
    refused: int = 0
    lost_answers: int = 0
    accepted_at: dict[str, float] = field(default_factory=dict)  # job id -> monotonic time


class Workload:
    """Submit ``jobs`` jobs at ``rate`` per second through ``concurrency`` threads."""

    def __init__(self, history: Any, submit: SubmitFn, values: dict[str, Any], *, seed: int,
                 jobs: int, rate: float, concurrency: int):
        self.history = history
        self.record = Record(history)
        self.submit = submit
        self.values = values
        self.seed = seed
        self.jobs = jobs
        self.rate = rate
        self.stats = WorkloadStats()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max(concurrency, 1), thread_name_prefix="nightly-submit")
        self._slots = threading.BoundedSemaphore(max(concurrency, 1))
        self._pacer = threading.Thread(target=self._pace, name="nightly-pacer", daemon=True)

    def start(self) -> None:
        self._started = time.monotonic()
        self._pacer.start()

    def _pace(self) -> None:
        for index in range(self.jobs):
            due = self._started + index / self.rate
            if self._stop.wait(max(0.0, due - time.monotonic())):
                return
            # at most `concurrency` submissions in flight: a slow app slows the stream down
            while not self._slots.acquire(timeout=0.2):
                if self._stop.is_set():
                    return
            self._pool.submit(self._one, JobSpec.draw(self.seed, index))

    def _one(self, job: JobSpec) -> None:
        try:
            data = {"project": job.project, "file": job.file, "index": job.index}
            self.record.submitting(**data)
            with self._lock:
                self.stats.submitted += 1
            try:
                job_id = self.submit(self.values, job)
            except Exception as exc:  # noqa: BLE001 - a lost answer is evidence, not a crash
                self.record.submission(None, accepted=None, error=repr(exc), **data)
                with self._lock:
                    self.stats.lost_answers += 1
                return
            self._record_answer(data, job_id)
        finally:
            self._slots.release()

    def _record_answer(self, data: dict[str, Any], job_id: str | None) -> None:
        if job_id is None:
            self.record.submission(None, accepted=False, error="refused", refused=True, **data)
            with self._lock:
                self.stats.refused += 1
            return
        self.record.submission(str(job_id), status=202, **data)
        with self._lock:
            self.stats.accepted += 1
            self.stats.accepted_at.setdefault(str(job_id), time.monotonic())

    def accepted_at(self) -> dict[str, float]:
        with self._lock:
            return dict(self.stats.accepted_at)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop submitting; wait for the submissions in flight (their answers are evidence)."""
        self._stop.set()
        self._pacer.join(timeout)
        self._pool.shutdown(wait=True)

    def wait_done(self, deadline: float) -> None:
        """Block until every job was handed out, or the monotonic ``deadline``."""
        self._pacer.join(max(0.0, deadline - time.monotonic()))
