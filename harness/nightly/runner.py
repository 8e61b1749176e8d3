"""One nightly run: the workload and the fault schedule together on a run, then the verdict.

``drive`` plays a schedule on any ``Run`` (the nightly's own, or a
scenario's ``jq``): submit the workload, inject and heal the faults, check
continuously, then let the app settle. ``judge`` collects the evidence and
runs the invariants. ``NightlyRunner`` owns a stack and gives every run
(the first, a replay, each shrinking attempt) a fresh reset of it.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.checks import GLOBAL_INVARIANTS, Verdict, run_checks, sweep_complete
from harness.checks.generic import applicable, decided
from harness.checks.runner import checker_name
from harness.checks.result import mark
from harness.config import Config
from harness.errors import SettleTimeout
from harness.history.history import History
from harness.history.snapshot import Snapshot
from harness.nightly.checks import no_job_stuck
from harness.nightly.monitor import Monitor, Status
from harness.nightly.nemesis import SOURCE, Nemesis, Window
from harness.nightly.schedule import Schedule
from harness.nightly.sweeps import SweepHooks, SweepLoop
from harness.nightly.workload import SubmitFn, Workload

SETTLE_MARGIN_S = 5.0  # past the job bound, for the last jobs to end before the final check
FAIL_FAST_SETTLE_S = 2.0  # a run that failed already only lets the calls under way finish
NIGHTLY_INVARIANTS = (*GLOBAL_INVARIANTS, no_job_stuck)
# a sweep run whose worker a fault killed cannot record its own end: the app's sweep_record calls it
# "abandoned" once a later run came after it, and its rows are still judged
SWEEP_OPTIONS = {"sweep_complete": {"ended_states": ["done", "abandoned"]}}


def invariants(schedule: Schedule) -> tuple:
    """What judges a run of ``schedule``: the nightly's invariants, and the sweep's when it ran one."""
    return (*NIGHTLY_INVARIANTS, sweep_complete) if schedule.sweep_every else NIGHTLY_INVARIANTS


@dataclass
class Driven:
    """What playing a schedule left: the fault windows, the last status, the workload's figures."""

    windows: list[Window]
    status: Status
    accepted: int
    submitted: int
    started_wall: float
    wall_s: float
    started: float = 0.0  # monotonic time of the run's start: fault windows are seconds after it


@dataclass
class Outcome:
    """A judged nightly run."""

    schedule: Schedule
    verdict: Verdict
    driven: Driven
    history: History
    snapshot: Snapshot | None
    artifacts: Path
    check_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0 valid, 1 invalid, 2 unknown."""
        return {True: 0, False: 1}.get(self.verdict.valid, 2)

    def failed_invariants(self) -> set[str]:
        return {r.name for r in self.verdict.results if r.valid is False}


def drive(run: Any, schedule: Schedule, submit: SubmitFn, on_tick: Callable[[Status], None] | None = None,
          stop: threading.Event | None = None, fail_fast: bool = False, sweep: SweepHooks | None = None) -> Driven:
    """Play ``schedule`` on ``run``; returns once every fault is healed and the app had time to settle.

    ``fail_fast`` (shrinking): the run ends at the first job found stuck, since it has failed already,
    also when that is found while the app settles.
    ``sweep``: the app's sweep hooks, needed when the schedule runs a sweep workload.
    """
    if schedule.sweep_every and sweep is None:
        from harness.errors import ConfigError

        raise ConfigError("this schedule runs the app's sweep (it draws poison rows), but [tool.jobquake.nightly] "
                          "names no sweep / sweep_record", key="nightly.sweep")
    stop = stop or threading.Event()
    run.history.record(SOURCE, "ok", "start", data={"seed": schedule.seed, "duration": schedule.duration,
                                                    "faults": len(schedule.faults), "jobs": schedule.jobs})
    started_wall, started = time.time(), time.monotonic()
    workload = Workload(run.history, submit, run.values, seed=schedule.seed, jobs=schedule.jobs,
                        rate=schedule.rate, concurrency=schedule.concurrency)
    nemesis = Nemesis(run, schedule.faults, started)
    monitor = Monitor(run, workload, nemesis, job_bound=schedule.job_bound, on_tick=on_tick,
                      on_stuck=(lambda _job: stop.set()) if fail_fast else None)
    nemesis.judged = monitor.judged_before
    sweeps = SweepLoop(run, sweep, schedule.sweep_every) if schedule.sweep_every and sweep else None
    for part in (nemesis, workload, monitor, *([sweeps] if sweeps else [])):
        part.start()
    try:
        stop.wait(max(0.0, started + schedule.duration - time.monotonic()))
    finally:
        workload.stop()
        if sweeps is not None:
            sweeps.stop()
        # a defence still off stays off until the jobs it exposed are judged (a run that failed already
        # does not wait for that)
        nemesis.finish(hold=0.0 if fail_fast and monitor.stuck else schedule.job_bound + SETTLE_MARGIN_S)
        run.history.record(SOURCE, "ok", "stop", data={"t": round(nemesis.now(), 3)})
        # the monitor keeps looking while the app settles: a job still stuck is reported
        if fail_fast and monitor.stuck:
            settled(run, FAIL_FAST_SETTLE_S)
        elif not settle(run, monitor, schedule, give_up=stop.is_set if fail_fast else None) and monitor.stuck:
            settled(run, FAIL_FAST_SETTLE_S)  # found stuck while settling: failed already
        nemesis.stop_supervising()
        final = monitor.stop()
        if sweeps is not None:
            sweeps.record()
    return Driven(nemesis.windows, final, workload.stats.accepted, workload.stats.submitted,
                  started_wall, round(time.monotonic() - started, 3), started)


def settled(run: Any, timeout: float) -> bool:
    """``run.settle(timeout)``, as True / False: here a timeout is a state to watch, not an error."""
    try:
        run.settle(timeout=timeout)
    except SettleTimeout:
        return False
    return True


def settle(run: Any, monitor: Monitor, schedule: Schedule, give_up: Callable[[], bool] | None = None) -> bool:
    """Wait for the app to go quiet while it makes progress: a backlog drains, a lost job does not.

    Gives up once no job has ended for the job bound (plus a margin), or
    after the run's own duration again, or as soon as ``give_up()`` (a run
    that failed already); False then (the checks say why).
    """
    deadline = time.monotonic() + schedule.duration + schedule.job_bound
    ended, last_change = -1, time.monotonic()
    while not settled(run, 1.0):
        now = time.monotonic()
        if give_up is not None and give_up():
            run.history.record(SOURCE, "info", "settle", data={"settled": False, "gave_up": True,
                                                               "pending": monitor.status.in_flight})
            return False
        if len(monitor.completed) != ended:
            ended, last_change = len(monitor.completed), now
        elif now - last_change > schedule.job_bound + SETTLE_MARGIN_S or now > deadline:
            run.history.record(SOURCE, "info", "settle", data={"settled": False, "pending": monitor.status.in_flight})
            return False
    return True


def judge(run: Any, schedule: Schedule, driven: Driven, title: str) -> Outcome:
    """Heal, collect the evidence, run the invariants, write the artifacts."""
    from harness.evidence.collect import collect, save_logs
    from harness.report import write_artifacts

    run.faults.heal_all()
    # recovers_within_bound's bounds: the jobs the workload submitted after the last heal are its probes,
    # and each fault's recovery time (the report's column) is held to the run's job bound
    run.expect(job_bound=schedule.job_bound, recovery_bound=schedule.job_bound)
    began = time.monotonic()
    history, snapshot = collect(run)  # the ledger, failpoint triggers, the job state log, the snapshot
    collected = time.monotonic()
    chosen = invariants(schedule)
    # and every generic invariant whose evidence the run has, as after a scenario (undecided: left out)
    generic = applicable(history, snapshot, already=[checker_name(c) for c in chosen])
    verdict = run_checks((*chosen, *generic), history, snapshot, SWEEP_OPTIONS if schedule.sweep_every else None)
    verdict = Verdict(tuple(decided(verdict.results, generic)), verdict.options)
    check_s = round(time.monotonic() - collected, 3)
    write_artifacts(run.artifacts, history, snapshot, verdict, title=title, seed=schedule.seed)
    save_logs(run)
    return Outcome(schedule, verdict, driven, history, snapshot, run.artifacts, check_s,
                   extra={"collect_s": round(collected - began, 3), "history_events": len(history)})


def describe(outcome: Outcome) -> list[str]:
    """The verdict, one line per invariant."""
    lines = [f"verdict: {mark(outcome.verdict.valid)}   (end-of-run check {outcome.check_s:.2f} s)"]
    for result in outcome.verdict.results:
        lines.append(f"  {mark(result.valid):<8} {result.name}: {result.message}")
    return lines


class NightlyRunner:
    """A stack started once; each ``run_schedule`` gets a fresh reset of it and its own artifacts folder."""

    def __init__(self, config: Config, submit: SubmitFn, workdir: Path, sweep: SweepHooks | None = None,
                 stack: Any = None, on_run: Callable[[Any], None] | None = None):
        """``stack``: a started stack to use (a pytest session's), left running by ``stop``;
        ``on_run``: told each run as it starts and None as it ends (its owner forwards worker events)."""
        self.config = config
        self.submit = submit
        self.sweep = sweep
        self.workdir = workdir
        self._stack = stack
        self._owns_stack = stack is None
        self._on_run = on_run or (lambda run: None)
        self._run = None
        self.runs = 0

    def start(self) -> None:
        from harness.stack import reaper
        from harness.stack.stack import Stack

        if not self._owns_stack:
            return
        reaper.reap()
        self._stack = Stack(self.config, reaper.run_dir() / "stack", on_worker_event=self._worker_event)
        self._stack.start()

    def _worker_event(self, name: str, worker: Any, data: dict) -> None:
        if self._run is not None:
            self._run.record.worker(name, **data)

    def run_schedule(self, schedule: Schedule, artifacts: Path, on_tick: Callable[[Status], None] | None = None,
                     title: str = "nightly", fail_fast: bool = False) -> Outcome:
        """Reset the stack, write the schedule, play it, judge it."""
        from harness.run import Run

        assert self._stack is not None, "start() first"
        self._stack.reset()
        self._stack.scale(schedule.replicas)  # production runs several: the schedule drew how many
        run = Run(self._stack, self.config, Path(artifacts), title)
        (run.artifacts / "schedule.json").write_text(schedule.to_json())  # before anything runs
        self._run = run
        self._on_run(run)
        self.runs += 1
        try:
            driven = drive(run, schedule, self.submit, on_tick, fail_fast=fail_fast, sweep=self.sweep)
            return judge(run, schedule, driven, title)
        finally:
            run.faults.heal_all()
            run.close()
            self._run = None
            self._on_run(None)

    def stop(self) -> None:
        from harness.stack import reaper

        if self._stack is not None and self._owns_stack:
            self._stack.stop()
            self._stack = None
            reaper.remove_run_dir()

    def __enter__(self) -> "NightlyRunner":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
