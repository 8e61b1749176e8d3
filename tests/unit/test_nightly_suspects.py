"""Suspect selection: the faults active while a counterexample's job lived, nearest first; and shrinking
tries them (alone, then together) before ddmin."""
from __future__ import annotations

from types import SimpleNamespace

from harness.checks.result import invalid_result, valid_result
from harness.history.builder import BASE_T, HistoryBuilder
from harness.nightly.schedule import Planned, Schedule
from harness.nightly.shrink import Shrinker, suspect_candidates
from harness.nightly.suspects import counterexample_jobs, lifetimes, suspects, suspects_of

KILL = {"fault": "kill_worker", "when": "now"}
SWEEPER_OFF = {"fault": "pause_service", "service": "sweeper", "defence_off": True}


def planned(at: float, lasts: float, spec: dict = KILL, extends_bound: bool = True) -> Planned:
    return Planned(at=at, lasts=lasts, kind="kill" if extends_bound else "defence_off", spec=spec,
                   extends_bound=extends_bound)


def window(index: int, fault: Planned, injected: float | None, healed: float | None) -> SimpleNamespace:
    return SimpleNamespace(index=index, planned=fault, injected_at=injected, healed_at=healed)


SCHEDULE = Schedule(seed=5, duration=60.0, rate=2.0, concurrency=4, job_bound=20.0, faults=(
    planned(2.0, 3.0),                                    # 0: healed before the job began
    planned(5.0, 40.0, SWEEPER_OFF, extends_bound=False),  # 1: a defence, held off past its planned heal
    planned(12.0, 4.0),                                   # 2: began 1 s after the job: the nearest
    planned(20.0, 3.0),                                   # 3: began 9 s after the job, still during it
    planned(30.0, 3.0),                                   # 4: never landed
    planned(50.0, 3.0),                                   # 5: after the job was found stuck
))
# as played: the defence returned only at 52 s (held until its jobs were judged); fault 4 failed to inject
WINDOWS = [window(0, SCHEDULE.faults[0], 2.0, 5.5), window(1, SCHEDULE.faults[1], 5.0, 52.0),
           window(2, SCHEDULE.faults[2], 12.1, 16.4), window(3, SCHEDULE.faults[3], 20.0, 23.2),
           window(4, SCHEDULE.faults[4], None, None), window(5, SCHEDULE.faults[5], 50.0, None)]


def history_of_a_stuck_job() -> HistoryBuilder:
    b = HistoryBuilder()
    b.submit("j-ok", 1.0)
    b.state("j-ok", 1.5, "done", attempt=1)
    b.submit("j-7", 11.0)                       # the counterexample's job: accepted at 11 s ...
    b.state("j-7", 11.2, "running", attempt=1)
    b.event("nightly", "fail", "stuck", 46.0, "j-7", bound=20.0, state="running", found_at=46.0)  # ... stuck
    return b


def outcome(results: tuple) -> SimpleNamespace:
    # the run started at the builder's base: its events are at run seconds
    driven = SimpleNamespace(windows=WINDOWS, started=BASE_T, wall_s=60.0)
    return SimpleNamespace(schedule=SCHEDULE, verdict=SimpleNamespace(results=results),
                           history=history_of_a_stuck_job().history(), driven=driven)


STUCK = invalid_result("no_job_stuck", "1 job stuck", [{"job_id": "j-7", "t": 46.0}])


def test_a_job_lives_from_its_first_event_to_its_last_and_a_stuck_one_until_it_was_found():
    spans = lifetimes(history_of_a_stuck_job().history(), ["j-7", "j-ok", "never-seen"], started=BASE_T)
    assert spans == {"j-7": (11.001, 46.0), "j-ok": (1.001, 1.5)}  # the accepted submit is recorded 1 ms later


def test_the_suspects_are_the_landed_faults_active_during_the_job_nearest_first():
    found = suspects(WINDOWS, {"j-7": (11.0, 46.0)}, run_end=60.0)
    assert [s.index for s in found] == [2, 1, 3]  # gaps 1.1, 6, 9; not 0 (before), 4 (never landed), 5 (after)
    assert [s.gap for s in found] == [1.1, 6.0, 9.0]
    assert "a defence held off" in found[1].why and "j-7" in found[0].why


def test_a_defence_counts_while_it_was_held_off_not_only_until_its_planned_heal():
    # planned heal at 45 s; a job alive only from 47 s still overlaps the defence held off until 52 s
    found = suspects(WINDOWS, {"j-late": (47.0, 51.0)}, run_end=60.0)
    assert [s.index for s in found] == [5, 1]  # and fault 5, active until the run's end, 3 s from the job


def test_the_suspects_of_a_run_come_from_its_failed_wanted_invariants_only():
    held = valid_result("no_double_billing", "fine")
    assert [s.index for s in suspects_of(outcome((STUCK, held)), {"no_job_stuck"})] == [2, 1, 3]
    assert suspects_of(outcome((STUCK,)), {"no_double_billing"}) == []  # not a wanted invariant
    assert counterexample_jobs([STUCK, STUCK]) == ["j-7"]


def test_each_delaying_suspect_is_tried_with_the_suspected_defences_then_all_together():
    found = suspects(WINDOWS, {"j-7": (11.0, 46.0)}, run_end=60.0)
    assert [sorted(indices) for indices, _ in suspect_candidates(found, SCHEDULE)] == [[1, 2], [1, 3], [1, 2, 3]]


def test_shrinking_tries_the_suspects_before_ddmin_and_keeps_only_a_candidate_that_failed():
    tried: list[list[int]] = []

    def attempt(candidate: Schedule) -> SimpleNamespace:
        tried.append([SCHEDULE.faults.index(f) for f in candidate.faults])
        bad = {1, 3} <= set(tried[-1])  # the job is lost only when fault 3 kills it with the sweeper off
        return SimpleNamespace(schedule=candidate, failed_invariants=lambda: {"no_job_stuck"} if bad else set())

    original = outcome((STUCK,))
    original.failed_invariants = lambda: {"no_job_stuck"}
    logged: list[str] = []
    shrinker = Shrinker(attempt, original, budget_s=10_000, log=logged.append)
    reduced = shrinker.suspected(SCHEDULE)
    assert tried == [[1, 2], [1, 3]]  # the nearest alone passed, the next one failed: two reruns, not ddmin's many
    assert [SCHEDULE.faults.index(f) for f in reduced.faults] == [1, 3]
    assert any("suspect fault 3 alone with the defence(s) off [1]" in line for line in logged)
    assert any(line.startswith("shrink suspect: fault 2 (") for line in logged)


def test_without_a_job_in_the_counterexample_shrinking_goes_straight_to_ddmin():
    original = outcome((invalid_result("sweep_complete", "rows left", [{"row": 3}]),))
    original.failed_invariants = lambda: {"sweep_complete"}
    shrinker = Shrinker(lambda s: None, original, budget_s=10_000, log=lambda _: None)
    assert shrinker.suspected(SCHEDULE) == SCHEDULE and shrinker.reruns == 0
