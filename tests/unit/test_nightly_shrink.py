"""Shrinking a failing schedule, against a fake app whose failure is a known set of faults."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from harness.errors import SettleTimeout
from harness.nightly.runner import settle
from harness.nightly.schedule import Planned, Schedule
from harness.nightly.scenario_writer import scenario_source
from harness.nightly.shrink import CANDIDATE_TAIL_S, PIN_WINDOW_S, Shrinker, rerun_cost, trimmed


@dataclass
class FakeOutcome:
    schedule: Schedule
    failed: set[str]
    driven: Any = field(default_factory=lambda: SimpleNamespace(windows=[]))
    verdict: Any = field(default_factory=lambda: SimpleNamespace(results=()))  # no counterexample: no suspects

    def failed_invariants(self) -> set[str]:
        return self.failed


def fault(i: int, at: float) -> Planned:
    return Planned(at=at, lasts=4.0, kind="kill", spec={"fault": "kill_worker", "index": i % 2, "when": "now"})


SCHEDULE = Schedule(seed=3, duration=120.0, rate=8.0, concurrency=4, job_bound=20.0,
                    faults=tuple(fault(i, 10.0 + 9 * i) for i in range(8)))


def test_ddmin_finds_the_two_faults_that_fail_together():
    culprits = (2, 5)

    def attempt(schedule: Schedule) -> FakeOutcome:
        # every candidate ends a few seconds after its own last heal
        assert schedule.duration == max(f.heal_at for f in schedule.faults) + CANDIDATE_TAIL_S
        ids = {round((f.at - 10.0) / 9) for f in schedule.faults}
        bad = set(culprits) <= ids
        return FakeOutcome(schedule, {"no_job_stuck"} if bad else set())

    original = FakeOutcome(SCHEDULE, {"no_job_stuck"})
    shrinker = Shrinker(attempt, original, budget_s=10_000, log=lambda _: None)
    reduced = shrinker.ddmin(SCHEDULE)
    assert [round((f.at - 10.0) / 9) for f in reduced.faults] == [2, 5]
    assert shrinker.reruns <= 24  # ddmin: quadratic at worst; schedules seen to pass are not rerun


def test_the_shrunk_schedule_is_shorter_has_fewer_jobs_and_always_failed():
    def attempt(schedule: Schedule) -> FakeOutcome:
        kinds = len(schedule.faults)
        bad = kinds >= 1 and schedule.rate >= 2.0  # one fault suffices, but only with enough jobs
        return FakeOutcome(schedule, {"no_job_stuck"} if bad else set())

    shrinker = Shrinker(attempt, FakeOutcome(SCHEDULE, {"no_job_stuck"}), budget_s=10_000, log=lambda _: None)
    shrunk = shrinker.shrink(SCHEDULE)
    assert len(shrunk.schedule.faults) == 1
    assert shrunk.schedule.faults[0].at == 1.0 and shrunk.schedule.duration == 6.0  # 1 + 4 + 1
    assert shrunk.schedule.rate == 2.0 and shrunk.schedule.faults[0].lasts == 0.5
    assert attempt(shrunk.schedule).failed_invariants() == {"no_job_stuck"}
    assert shrunk.reruns == shrinker.reruns and not shrunk.exhausted


def test_the_budget_stops_shrinking_with_a_schedule_that_failed():
    calls = []

    def attempt(schedule: Schedule) -> FakeOutcome:
        calls.append(schedule)
        return FakeOutcome(schedule, {"no_job_stuck"})

    shrinker = Shrinker(attempt, FakeOutcome(SCHEDULE, {"no_job_stuck"}), budget_s=0, log=lambda _: None)
    shrunk = shrinker.shrink(SCHEDULE)
    assert calls == [] and shrunk.exhausted and shrunk.schedule == SCHEDULE


def test_the_printed_scenario_is_valid_python_with_each_fault_and_its_when():
    source = scenario_source(SCHEDULE.with_faults(SCHEDULE.faults[:2]), invariant="no_job_stuck",
                             message="1 job stuck", reruns=7)
    compile(source, "scenario.py", "exec")
    assert "shrunk to this in 7 reruns" in source
    assert source.count('"when": "now"') == 2 and "def test_nightly_seed_3_minimal(jq):" in source


def _pin(kill_when_that_fails: dict) -> tuple[Schedule, int]:
    """A schedule with one kill "now", pinned by a shrinker whose reruns fail only with ``kill_when_that_fails``."""
    now_kill = Planned(at=5.0, lasts=2.0, kind="kill", spec={"fault": "kill_worker", "worker": "worker1",
                                                              "when": "now"})
    schedule = Schedule(seed=3, duration=30.0, rate=2.0, concurrency=4, job_bound=20.0, faults=(now_kill,))

    def attempt(candidate: Schedule) -> FakeOutcome:
        when = candidate.faults[0].spec["when"] if candidate.faults else None
        bad = when == "now" or when == kill_when_that_fails
        return FakeOutcome(candidate, {"no_job_stuck"} if bad else set())

    shrinker = Shrinker(attempt, FakeOutcome(schedule, {"no_job_stuck"}), budget_s=10_000, log=lambda _: None,
                        kill_failpoints=("task.claimed", "task.before_paid_call"))
    return shrinker.pinned(schedule), shrinker.reruns


def test_a_kill_now_is_pinned_to_a_call_in_flight_first():
    pinned, reruns = _pin({"in_flight": {}})
    assert pinned.faults[0].spec == {"fault": "kill_worker", "when": {"in_flight": {}}}
    assert reruns == 1


def test_a_kill_now_is_pinned_to_a_failpoint_when_only_that_still_fails():
    pinned, reruns = _pin({"at_failpoint": {"name": "task.before_paid_call"}})  # e.g. a job with no paid call
    assert pinned.faults[0].spec == {"fault": "kill_worker", "when": {"at_failpoint": {"name": "task.before_paid_call"}}}
    assert reruns == 3


def test_a_kill_now_stays_when_no_moment_mid_job_fails():
    pinned, reruns = _pin({"never": {}})
    assert pinned.faults[0].spec["when"] == "now"
    assert reruns == 3


def outage(at: float, when: Any = None) -> Planned:
    spec = {"fault": "broker_outage", **({"when": when} if when else {})}
    return Planned(at=at, lasts=2.0, kind="broker", spec=spec)


def played(schedule: Schedule, waiting: list[int | None]) -> SimpleNamespace:
    """The windows of a run of ``schedule``: each outage recorded how many waiting messages it took."""
    windows = [SimpleNamespace(index=i, planned=f, fault=SimpleNamespace(outage=None if n is None else {"waiting": n}))
               for i, (f, n) in enumerate(zip(schedule.faults, waiting))]
    return SimpleNamespace(windows=windows)


def test_an_outage_that_took_messages_is_pinned_to_that_moment_and_kept_only_once_a_rerun_fails():
    schedule = Schedule(seed=7, duration=60.0, rate=2.0, concurrency=4, job_bound=38.3,
                        faults=(outage(5.0), outage(20.0), outage(30.0)))
    seen = []

    def attempt(candidate: Schedule) -> FakeOutcome:  # only the pinned second outage loses a job for sure
        seen.append(candidate)
        bad = any(f.spec.get("when") == {"queued": {}} for f in candidate.faults)
        return FakeOutcome(candidate, {"no_job_stuck"} if bad else set())

    original = FakeOutcome(schedule, {"no_job_stuck"}, played(schedule, [0, 17, None]))
    shrinker = Shrinker(attempt, original, budget_s=10_000, log=lambda _: None)
    pinned = shrinker.pin_outages(schedule)
    # the pinned outage waits from the heal of the fault before it (a backlog forms then) to its own heal
    assert [(f.at, f.lasts) for f in pinned.faults] == [(5.0, 2.0), (7.0, 15.0), (30.0, 2.0)]
    assert [f.spec for f in pinned.faults] == [{"fault": "broker_outage"},
                                              {"fault": "broker_outage", "when": {"queued": {}}},
                                              {"fault": "broker_outage"}]
    shrunk = shrinker.shrink(schedule)
    assert [f.spec for f in shrunk.schedule.faults] == [{"fault": "broker_outage", "when": {"queued": {}}}]
    assert seen[0].duration == 22.0 + CANDIDATE_TAIL_S  # the first rerun (half the faults) ends after its last heal

    unverified = Shrinker(attempt, original, budget_s=0, log=lambda _: None).shrink(schedule)
    assert unverified.schedule == schedule  # the pin is free, but never printed before a rerun failed with it


def test_a_pinned_outage_waits_at_least_the_pin_window():
    schedule = Schedule(seed=7, duration=60.0, rate=2.0, concurrency=4, job_bound=38.3, faults=(outage(20.0),))
    original = FakeOutcome(schedule, {"no_job_stuck"}, played(schedule, [3]))
    [pinned] = Shrinker(lambda s: original, original, budget_s=0, log=lambda _: None).pin_outages(schedule).faults
    assert (pinned.at, pinned.lasts, pinned.spec["when"]) == (20.0, PIN_WINDOW_S, {"queued": {}})


def test_a_rerun_is_afforded_by_its_worst_case_which_trimming_cuts():
    schedule = Schedule(seed=7, duration=60.0, rate=2.0, concurrency=4, job_bound=38.3,
                        faults=(outage(6.58), outage(24.15)))
    assert trimmed(schedule).duration == 24.15 + 2.0 + CANDIDATE_TAIL_S
    assert rerun_cost(schedule) == pytest.approx(60.0 + 38.3 + 10.0)
    assert rerun_cost(trimmed(schedule)) == pytest.approx(31.15 + 38.3 + 10.0)
    assert trimmed(schedule.with_faults(())) == schedule.with_faults(())
    sweeper_off = Planned(at=14.56, lasts=35.44, kind="defence_off", extends_bound=False,
                          spec={"fault": "pause_service", "service": "sweeper", "defence_off": True})
    # a defence held off until its jobs are judged needs only to begin before the run ends
    assert trimmed(schedule.with_faults((sweeper_off, outage(6.58)))).duration == pytest.approx(14.56 + CANDIDATE_TAIL_S)
    assert trimmed(schedule.with_faults((sweeper_off, outage(20.0)))).duration == pytest.approx(22.0 + CANDIDATE_TAIL_S)


def test_settling_gives_up_at_once_when_the_run_failed_already():
    class Busy:  # an app that never goes quiet
        def __init__(self):
            self.history = SimpleNamespace(events=[], record=lambda *a, **k: self.history.events.append((a, k)))
            self.calls = 0

        def settle(self, timeout):
            self.calls += 1
            raise SettleTimeout(SimpleNamespace(describe=lambda: "still busy"))

    run = Busy()
    monitor = SimpleNamespace(completed={}, status=SimpleNamespace(in_flight=3))
    schedule = Schedule(seed=1, duration=60.0, rate=2.0, concurrency=4, job_bound=38.3)
    assert settle(run, monitor, schedule, give_up=lambda: run.calls >= 2) is False
    assert run.calls == 2 and run.history.events[-1][1]["data"]["gave_up"] is True
