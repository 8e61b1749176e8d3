"""``Run``: one scenario's handle on the stack, the type of the ``jq`` fixture.

Scenarios annotate it (``def test_x(jq: Run, ...)``). What a scenario uses:

- ``jq.faults``: inject faults (one method per fault), healed before the verdict;
- ``jq.record``: write what the app was asked and told (submissions, status events);
- ``jq.streams``: the app's status streams, read as a client would (config's all-jobs stream always);
- ``jq.settle()``: wait until nothing can still cause work (``SettleTimeout`` at the bound);
- ``jq.expect(...)``: declare what the scenario makes, for the checkers;
- ``jq.stack``, ``jq.paidapi``, ``jq.failpoints``, ``jq.proxy``, ``jq.workers``: controls,
  not faults: what they change is neither recorded nor healed;
- ``jq.config``, ``jq.values``, ``jq.database_url`` / ``database_dsn`` / ``redis_url``,
  ``jq.scaled()``, ``jq.rng``, ``jq.seed``, ``jq.history``, ``jq.artifacts``.

The verdict's side (``harness.verdict``) reads the run through ``catch_up()``,
``service_log()``, ``job_logs`` and ``opened``, and ends it with ``close()``.
"""
from __future__ import annotations

import random
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any, cast

from harness.config import Config
from harness.errors import SettleTimeout
from harness.evidence import JobTable
from harness.evidence.events import events_from_heartbeats, events_from_state_log
from harness.evidence.job_logs import JobLogs
from harness.failpoints.control import FailpointControl
from harness.faults import Faults
from harness.history import Record, Recorder
from harness.history import vocabulary as v
from harness.history.clock import WALL_CLOCK
from harness.paidapi.control import PaidAPIControl
from harness.pending import SettleOutcome, Settler
from harness.pending.sources import Sources
from harness.proxy.client import ProxyClient
from harness.stack.stack import Stack
from harness.stack.worker import WorkerPool
from harness.streams import StatusStreams

__all__ = ["Run", "artifacts_dir_for"]


def artifacts_dir_for(root: Path, nodeid: str) -> Path:
    """A readable, unique folder name for a test id."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")
    return Path(root) / safe[:180]


class Run:
    """The stack as one test sees it, plus that test's evidence folder, history and seeded RNG."""

    stack: Stack
    config: Config
    nodeid: str
    seed: int
    artifacts: Path
    rng: random.Random
    history: Recorder
    record: Record
    jobs: JobTable
    job_logs: JobLogs
    opened: float
    paidapi: PaidAPIControl
    proxy: ProxyClient
    failpoints: FailpointControl
    workers: WorkerPool
    values: dict[str, Any]
    faults: Faults
    settle_outcome: SettleOutcome | None

    def __init__(self, stack: Stack, config: Config, artifacts: Path, nodeid: str):
        self.stack = stack
        self.config = config
        self.nodeid = nodeid
        self.seed = config.seed
        self.artifacts = artifacts
        self.opened = time.monotonic()  # wall-clock steps since then are shown on the timeline
        WALL_CLOCK.start()  # from here on a step of the wall clock cannot misplace the database's times
        shutil.rmtree(self.artifacts, ignore_errors=True)  # evidence of an earlier run of this test
        self.artifacts.mkdir(parents=True)
        # one RNG per test, derived from the run seed: replaying one test replays its choices
        self.rng = random.Random(f"{config.seed}:{nodeid}")
        self.history = Recorder(self.artifacts / "history.jsonl")
        self.record = Record(self.history)  # what the scenario saw the app do, in the checkers' words
        self.jobs = stack.job_table(config)
        self.job_logs = JobLogs(self.jobs, stack.postgres.dsn)  # read as they grow: see catch_up
        self._catch_up_lock = threading.Lock()
        self.paidapi = stack.paidapi.control()
        self.proxy = stack.proxy.client()
        self.failpoints = stack.failpoints
        self.workers = stack.workers
        self.values = stack.values
        self._log_offsets = {svc.name: svc.log_offset() for svc in stack.services()}
        self.faults = Faults(self)  # healed by the session before judging and at teardown
        self.sources = Sources(self)
        self.settler = Settler(self.sources.readers())
        self.settle_outcome: SettleOutcome | None = None  # the last settle's, for the verdict
        self.streams = StatusStreams(self)
        self.streams.all_jobs()  # what a dashboard is told, from before the scenario does anything

    @property
    def database_url(self) -> str:
        """The app's SQLAlchemy URL of its database (through the fault proxy when it is proxied)."""
        return cast("str", self.values["database_url"])

    @property
    def database_dsn(self) -> str:
        """libpq URL of the app database, direct (never through the fault proxy)."""
        return self.stack.postgres.dsn

    @property
    def redis_url(self) -> str:
        """The broker's URL, as the app is given it."""
        return cast("str", self.values["redis_url"])

    def scaled(self, seconds: float) -> float:
        """A production duration in this run's time (``seconds × time_scale``)."""
        return seconds * self.config.time_scale

    # -- after the scenario --------------------------------------------------------
    def settle(self, timeout: float | None = None) -> SettleOutcome:
        """Wait until nothing can still cause work; the outcome. ``SettleTimeout`` at the bound.

        The timeout (``.outcome``: what was still pending) is also recorded,
        and the verdict reports it; a scenario whose story is "this never
        settles" writes ``with pytest.raises(SettleTimeout): jq.settle(...)``.

        Waits for: every job terminal, every ``pending_queries`` at 0, no paid
        call in flight, the Redis broker's queues empty with no message
        handed out and unacknowledged (running, reserved or scheduled with an
        ETA / countdown), and every SQS queue without visible, in-flight or
        delayed messages (dead letters are reported, not waited for).
        """
        timeout = self.config.settle_timeout if timeout is None else timeout
        outcome = self.settler.wait(timeout)
        self.settle_outcome = outcome
        self.history.record(v.HARNESS, "ok" if outcome.settled else "info", v.SETTLE,
                            data={"settled": outcome.settled, "waited": round(outcome.waited, 3),
                                  "timeout": timeout, "pending": [p.to_dict() for p in outcome.pending]})
        if not outcome.settled:
            raise SettleTimeout(outcome)
        return outcome

    def expect(self, **counts: float | str) -> None:
        """Record what the scenario declared for the checkers: what it makes (``paid_calls=0``, ``jobs=0``),
        and what a healed system keeps (``job_bound=s``, ``recovery_bound=s``, ``probe_state="done"``: see
        ``harness.checks.recovery``)."""
        self.record.expected(**counts)

    # -- what collecting the evidence reads (harness.evidence.collect) ------------------
    def catch_up(self) -> None:
        """Move the job state log and heartbeat log rows logged since the last call into the history.

        A long run calls it as it goes (the nightly's monitor, every few
        seconds), so that collecting at the end reads, converts and records
        only the tail. Safe from any thread; a database that cannot be
        read now raises, and loses nothing: the next call reads those rows.
        """
        with self._catch_up_lock:
            changes, beats = self.job_logs.read_new()
            self.history.extend(events_from_state_log(changes))
            self.history.extend(events_from_heartbeats(beats))

    def service_log(self, service: Any) -> str:
        """What ``service`` (a worker, an app process, a server of the stack) logged since this run began."""
        return cast("str", service.logs_since(self._log_offsets.get(service.name, 0)))

    def close(self) -> None:
        """Stop the settle's readers and close the job logs and the history (the session does, at teardown)."""
        self.sources.close()
        self.streams.close()
        self.job_logs.close()
        self.history.close()
