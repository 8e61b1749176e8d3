"""One scenario's handle on the stack: what a test touches through the ``jq`` fixture."""
from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

from harness.checks.needs import EXPECT, LEDGER_SOURCE, READ, SNAPSHOT_SOURCE, STATE_LOG_SOURCE
from harness.checks.snapshot import Snapshot
from harness.config import Config
from harness.evidence import JobTable
from harness.faults import Faults
from harness.history import History, Recorder
from harness.history import vocabulary as v
from harness.history.converters import events_from_ledger, events_from_triggers
from harness.history.derive import attempt_deaths
from harness.pending import SettleOutcome, Settler
from harness.pending.sources import Sources
from harness.stack.stack import Stack


def artifacts_dir_for(root: Path, nodeid: str) -> Path:
    """A readable, unique folder name for a test id."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")
    return Path(root) / safe[:180]


class Run:
    """The stack as one test sees it, plus that test's evidence folder, history and seeded RNG."""

    def __init__(self, stack: Stack, config: Config, artifacts: Path, nodeid: str):
        self.stack = stack
        self.config = config
        self.nodeid = nodeid
        self.seed = config.seed
        self.artifacts = artifacts
        shutil.rmtree(self.artifacts, ignore_errors=True)  # evidence of an earlier run of this test
        self.artifacts.mkdir(parents=True)
        # one RNG per test, derived from the run seed: replaying one test replays its choices
        self.rng = random.Random(f"{config.seed}:{nodeid}")
        self.history = Recorder(self.artifacts / "history.jsonl")
        self.jobs = JobTable.from_config(config)
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

    @property
    def database_url(self) -> str:
        return self.values["database_url"]

    @property
    def database_dsn(self) -> str:
        """libpq URL of the app database, direct (never through the fault proxy)."""
        return self.stack.postgres.dsn

    @property
    def redis_url(self) -> str:
        return self.values["redis_url"]

    def scaled(self, seconds: float) -> float:
        """A production duration in this run's time (``seconds × time_scale``)."""
        return seconds * self.config.time_scale

    # -- after the scenario --------------------------------------------------------
    def settle(self, timeout: float | None = None) -> bool:
        """Wait until nothing can still cause work; False at the bound (``settle_outcome`` says what).

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
        return outcome.settled

    def collect(self) -> tuple[History, Snapshot]:
        """Merge every source of evidence into the history; take the final DB snapshot."""
        ledger = self.paidapi.ledger()
        self.history.extend(events_from_ledger(ledger))
        self._read(LEDGER_SOURCE, len(ledger))  # checkers tell "read, empty" from "never read"
        self.history.extend(events_from_triggers(self.failpoints.triggers()))
        instrument = getattr(self.stack, "instrument", None)
        if instrument is not None:
            from harness.instrument.control import events_from_records

            self.history.extend(events_from_records(instrument.records()))
        states = self.jobs.state_events(self.database_dsn)
        self.history.extend(states)
        self._read(STATE_LOG_SOURCE, len(states))
        self.history.extend(attempt_deaths(states, self.jobs.terminal_states))
        from harness.limits import record_limits, record_results

        record_limits(self)  # the app's declared limits and saved results: generic invariants' evidence
        record_results(self, self.database_dsn)
        snapshot = self.jobs.snapshot(self.database_dsn)
        self._read(SNAPSHOT_SOURCE, len(snapshot.jobs))
        snapshot.save(self.artifacts / "snapshot.json")
        return self.history.events(), snapshot

    def _read(self, source: str, records: int) -> None:
        self.history.record(v.HARNESS, "ok", READ, data={"source": source, "records": records})

    def expect(self, **counts: int) -> None:
        """Record what the scenario declared it makes (``paid_calls=0``, ``jobs=0``) for the checkers."""
        self.history.record(v.HARNESS, "ok", EXPECT, data=counts)

    def save_logs(self) -> Path:
        """Write each service's log lines from this test into ``<artifacts>/logs``."""
        folder = self.artifacts / "logs"
        folder.mkdir(exist_ok=True)
        for svc in self.stack.services():
            (folder / f"{svc.name}.log").write_text(svc.logs_since(self._log_offsets.get(svc.name, 0)))
        return folder

    def close(self) -> None:
        self.sources.close()
        self.history.close()
