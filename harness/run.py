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

The session's side (collecting the evidence, saving logs, closing) is private.
"""
from __future__ import annotations

import random
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from harness.checks.needs import (EXPECT, HEARTBEAT_SOURCE, LEDGER_SOURCE, READ, SNAPSHOT_SOURCE, STATE_LOG_SOURCE,
                                  WORKER_LOG_SOURCE)
from harness.config import Config
from harness.errors import SettleTimeout
from harness.evidence import JobTable, Snapshot, attempt_deaths, hard_limit_kills, tasks_received
from harness.evidence.clock import WALL_CLOCK, wall_to_monotonic
from harness.evidence.job_logs import JobLogs
from harness.failpoints.control import FailpointControl
from harness.faults import Faults
from harness.history import History, Record, Recorder
from harness.history import vocabulary as v
from harness.history.converters import (events_from_attempt_deaths, events_from_hard_limit_kills,
                                        events_from_heartbeats, events_from_ledger, events_from_state_log,
                                        events_from_triggers)
from harness.paidapi.control import PaidAPIControl
from harness.pending import SettleOutcome, Settler
from harness.pending.sources import Sources
from harness.proxy.client import ProxyClient
from harness.stack.stack import Stack
from harness.stack.worker import WorkerPool
from harness.streams import StatusStreams
from harness.sweep_evidence import record_sweep_predicate


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
        self._opened = time.monotonic()
        WALL_CLOCK.start()  # from here on a step of the wall clock cannot misplace the database's times
        shutil.rmtree(self.artifacts, ignore_errors=True)  # evidence of an earlier run of this test
        self.artifacts.mkdir(parents=True)
        # one RNG per test, derived from the run seed: replaying one test replays its choices
        self.rng = random.Random(f"{config.seed}:{nodeid}")
        self.history = Recorder(self.artifacts / "history.jsonl")
        self.record = Record(self.history)  # what the scenario saw the app do, in the checkers' words
        self.jobs = JobTable.from_config(config)
        self._job_logs = JobLogs(self.jobs, stack.postgres.dsn)  # read as they grow: see _catch_up
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
        return self.values["database_url"]

    @property
    def database_dsn(self) -> str:
        """libpq URL of the app database, direct (never through the fault proxy)."""
        return self.stack.postgres.dsn

    @property
    def redis_url(self) -> str:
        """The broker's URL, as the app is given it."""
        return self.values["redis_url"]

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
        self.history.record("harness", "ok" if outcome.settled else "info", "settle",
                            data={"settled": outcome.settled, "waited": round(outcome.waited, 3),
                                  "timeout": timeout, "pending": [p.to_dict() for p in outcome.pending]})
        if not outcome.settled:
            raise SettleTimeout(outcome)
        return outcome

    # -- the session's side ------------------------------------------------------------
    def _collect(self) -> tuple[History, Snapshot]:
        """For the session: merge every source of evidence into the history; take the final DB snapshot."""
        ledger = self.paidapi.ledger()
        self.history.extend(events_from_ledger(ledger))
        self._read(LEDGER_SOURCE, len(ledger))  # checkers tell "read, empty" from "never read"
        self.history.extend(events_from_triggers(self.failpoints.triggers()))
        instrument = getattr(self.stack, "instrument", None)
        if instrument is not None:
            from harness.instrument.control import events_from_records

            self.history.extend(events_from_records(instrument.records()))
        self._catch_up()  # the logs' tail: what was read during the run is in the history already
        changes = self._job_logs.changes
        self._read(STATE_LOG_SOURCE, len(changes))  # the rows read in all, during the run and now
        self.history.extend(events_from_attempt_deaths(attempt_deaths(changes, self.jobs.terminal_states)))
        beats = self._job_logs.beats
        if beats is not None:  # config names a heartbeat column: the app's liveness evidence
            self._read(HEARTBEAT_SOURCE, len(beats))
        self._collect_hard_limit_kills()
        for at, step in WALL_CLOCK.steps_since(self._opened):  # shown on the timeline: it explains odd wall times
            self.history.record(v.HARNESS, "ok", v.WALL_CLOCK_STEPPED, t=at, data={"step_s": step})
        from harness.limits import record_limits, record_results

        record_limits(self)  # the app's declared limits and saved results: generic invariants' evidence
        record_results(self, self.database_dsn)
        record_sweep_predicate(self)  # the rows the app's sweep must still handle
        snapshot = self.jobs.snapshot(self.database_dsn)
        self.streams.finish(self.history.events(), snapshot)  # what they told, caught up with the database
        self._read(SNAPSHOT_SOURCE, len(snapshot.jobs))
        snapshot.save(self.artifacts / "snapshot.json")
        return self.history.events(), snapshot

    def _catch_up(self) -> None:
        """Move the job state log and heartbeat log rows logged since the last call into the history.

        A long run calls it as it goes (the nightly's monitor, every few
        seconds), so that ``_collect`` at the end reads, converts and records
        only the tail. Safe from any thread; a database that cannot be
        read now raises, and loses nothing: the next call reads those rows.
        """
        with self._catch_up_lock:
            changes, beats = self._job_logs.read_new()
            self.history.extend(events_from_state_log(changes))
            self.history.extend(events_from_heartbeats(beats))

    def _collect_hard_limit_kills(self) -> None:
        """The Celery workers' logs of this test: tasks killed at their hard time limit."""
        kills, received = [], 0
        for worker in self.stack.workers.workers:
            text = worker.logs_since(self._log_offsets.get(worker.name, 0))
            kills += hard_limit_kills(worker.name, text)
            received += tasks_received(text)
        self.history.extend(events_from_hard_limit_kills(kills, wall_to_monotonic()))
        self.history.record(v.HARNESS, "ok", READ,
                            data={"source": WORKER_LOG_SOURCE, "records": len(kills), "tasks_received": received})

    def _read(self, source: str, records: int) -> None:
        self.history.record(v.HARNESS, "ok", READ, data={"source": source, "records": records})

    def expect(self, **counts: int) -> None:
        """Record what the scenario declared it makes (``paid_calls=0``, ``jobs=0``) for the checkers."""
        self.history.record(v.HARNESS, "ok", EXPECT, data=counts)

    def _save_logs(self) -> Path:
        """For the session: write each service's log lines from this test into ``<artifacts>/logs``."""
        folder = self.artifacts / "logs"
        folder.mkdir(exist_ok=True)
        for svc in self.stack.services():
            (folder / f"{svc.name}.log").write_text(svc.logs_since(self._log_offsets.get(svc.name, 0)))
        return folder

    def _close(self) -> None:
        """For the session: stop the settle's readers and close the history."""
        self.sources.close()
        self.streams.close()
        self._job_logs.close()
        self.history.close()
