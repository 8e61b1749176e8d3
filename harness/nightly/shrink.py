"""Shrink a failing schedule: fewer faults, a shorter run, fewer jobs, shorter faults.

Before any rerun, two edits that cost nothing: a broker outage "now" that
took waiting messages with it (its record says how many) is pinned to that
moment (``when={"queued": {}}``: once a message waits in the broker, in a
window that opens when the faults before it have healed, since the backlog
forms then), so a rerun or a printed scenario loses one however fast the
machine is; and the run ends a few seconds after its last heal (the
jobs after it cannot make it fail sooner, only cost time). Then delta
debugging (Zeller's ddmin) over the faults, since a fault dropped is the
largest step, each candidate also ending soon after its own last heal;
before ddmin, the faults the counterexample points at (``suspects.py``:
active while a job it names lived) are tried alone, nearest first, then
together, so that one rerun often does what ddmin does in many; ddmin then
works on what is left. Then a kill "now" (a schedule written before kills
were drawn in flight; it may find its worker idle, or busy, depending on the
machine's speed) is pinned to a moment where it lands mid-job: while any
job's paid call is in flight, else at one of the app's failpoints, if the
schedule still fails that way; then the run is cut to just around its
faults, the job rate halved, each fault's duration halved. Every candidate
is rerun on a fresh reset of the same stack (ending at the first job found
stuck, the continuous check's verdict) and kept only if one of the
invariants that failed originally fails again. The budget bounds the
whole: a rerun is started only if its worst case fits what is left; when
it runs out, the smallest schedule that still failed is the answer (it is
always one that failed).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

from harness.nightly.kinds import IN_FLIGHT
from harness.nightly.runner import NightlyRunner, Outcome
from harness.nightly.schedule import Planned, Schedule
from harness.nightly.scenario_writer import scenario_source
from harness.nightly.settings import NightlySettings
from harness.nightly.suspects import Suspect, suspects_of

LEAD_IN_S = 1.0   # a shifted schedule starts its first fault this far into the run
TAIL_S = 1.0      # and ends this long after its last heal
MIN_RATE = 0.5    # jobs per second: below this a run may carry no job past its faults
MIN_LASTS_S = 0.5
CANDIDATE_TAIL_S = 5.0  # a candidate ends this long after its last heal
RERUN_OVERHEAD_S = 10.0  # a rerun's reset of the stack, collection and verdict
QUEUED = {"queued": {}}  # the moment an outage certainly loses a message: one waits in the broker
PIN_WINDOW_S = 5.0  # a pinned outage may wait this long for its moment (a backlog comes and goes)
MAX_ALONE = 3  # suspects tried alone, nearest first: a rerun costs the run plus the job bound


@dataclass
class Shrunk:
    """The smallest failing schedule found, its outcome, and the cost of finding it."""

    schedule: Schedule
    outcome: Outcome
    reruns: int
    seconds: float
    exhausted: bool


class Shrinker:
    """Reruns candidates through ``attempt`` (returns an Outcome) until none smaller fails."""

    def __init__(self, attempt: Callable[[Schedule], Outcome], original: Outcome, budget_s: float,
                 log: Callable[[str], None] = print, kill_failpoints: tuple[str, ...] = ()):
        """``kill_failpoints``: where a kill may be pinned to land mid-job (the app's own list)."""
        self.attempt = attempt
        self.kill_failpoints = kill_failpoints
        self.wanted = original.failed_invariants()
        self.best = original
        self.budget_s = budget_s
        self.log = log
        self.started = time.monotonic()
        self.reruns = 0
        self.exhausted = False
        self._passed: set[str] = set()  # schedules already seen to pass: ddmin asks some twice

    # -- one rerun ---------------------------------------------------------------------
    def _affordable(self, schedule: Schedule) -> bool:
        if time.monotonic() - self.started + rerun_cost(schedule) > self.budget_s:
            self.exhausted = True
        return not self.exhausted

    def fails(self, schedule: Schedule) -> bool:
        """Rerun ``schedule``; True (and keep it as the best) if a wanted invariant fails again."""
        key = schedule.to_json()
        if key in self._passed or not self._affordable(schedule):
            return False
        self.reruns += 1
        outcome = self.attempt(schedule)
        failed = bool(outcome.failed_invariants() & self.wanted)
        if not failed:
            self._passed.add(key)
        self.log(f"shrink rerun {self.reruns}: {len(schedule.faults)} fault(s), {schedule.duration:g} s, "
                 f"{schedule.rate:g} jobs/s -> {'still fails' if failed else 'passes'}")
        if failed:
            self.best = outcome
        return failed

    # -- the passes ----------------------------------------------------------------------
    def pin_outages(self, schedule: Schedule) -> Schedule:
        """Each broker outage "now" whose run lost waiting messages: at that moment instead.

        The evidence is the original run's own (no rerun): the outage's
        record says how many messages waited in the broker when it stopped.
        """
        lost = {w.index for w in self.best.driven.windows
                if w.planned.spec == {"fault": "broker_outage"} and (_record(w).get("waiting") or 0) > 0}
        if not lost:
            return schedule
        faults = [_pinned_outage(f, schedule.faults) if i in lost else f for i, f in enumerate(schedule.faults)]
        return schedule.with_faults(faults)

    def suspected(self, schedule: Schedule) -> Schedule:
        """The suspects alone (nearest first), then together: the first candidate that still fails.

        "Alone" keeps the suspected defences switched off with it: a delaying
        fault exposes a missing defence, a defence off alone exposes nothing.
        A suspect of the original run keeps its index in every schedule
        before ddmin (the free edits replace faults, they drop none).
        """
        found = suspects_of(self.best, self.wanted)
        if not found:
            self.log("shrink: the counterexample names no job during a fault: no suspects, ddmin on all faults")
            return schedule
        for suspect in found:
            self.log(f"shrink suspect: fault {suspect.index} ({suspect.why})")
        for indices, why in suspect_candidates(found, schedule):
            if self.exhausted:
                break
            if len(indices) >= len(schedule.faults):
                continue  # no smaller than the schedule itself
            self.log(f"shrink: trying {why}")
            candidate = trimmed(schedule.with_faults([schedule.faults[i] for i in sorted(indices)]))
            if self.fails(candidate):
                return candidate
        return schedule

    def ddmin(self, schedule: Schedule) -> Schedule:
        """The classic ddmin over the faults: try subsets, then complements, refining the split."""
        faults = list(schedule.faults)
        n = 2
        while len(faults) >= 2 and not self.exhausted:
            chunks = _split(faults, n)
            reduced = False
            for subset in [*chunks, *([_without(faults, c) for c in chunks] if n > 2 else [])]:
                if self.fails(trimmed(schedule.with_faults(subset))):
                    faults, n, reduced = subset, max(2 if subset in chunks else n - 1, 2), True
                    break
            if not reduced:
                if n >= len(faults):
                    break
                n = min(2 * n, len(faults))
        return trimmed(schedule.with_faults(faults))

    def pinned(self, schedule: Schedule) -> Schedule:
        """Each kill "now" tied to a moment mid-job instead: a call in flight, else a failpoint
        (the first with which the schedule still fails)."""
        moments = [IN_FLIGHT, *({"at_failpoint": {"name": name}} for name in self.kill_failpoints)]
        for i, fault in enumerate(schedule.faults):
            if fault.spec.get("fault") != "kill_worker" or fault.spec.get("when", "now") != "now":
                continue
            for moment in moments:
                if self.exhausted:
                    return schedule
                faults = list(schedule.faults)
                faults[i] = replace(fault, spec={"fault": "kill_worker", "when": moment})
                candidate = schedule.with_faults(faults)
                if self.fails(candidate):
                    schedule = candidate
                    break
        return schedule

    def shorter(self, schedule: Schedule) -> Schedule:
        """Move the faults to the start and end the run just after the last heal."""
        if not schedule.faults:
            return schedule
        shift = max(0.0, min(f.at for f in schedule.faults) - LEAD_IN_S)
        moved = [replace(f, at=round(f.at - shift, 2)) for f in schedule.faults]
        end = round(max(f.heal_at for f in moved) + TAIL_S, 2)
        candidate = replace(schedule.with_faults(moved), duration=min(end, schedule.duration))
        if candidate != schedule and self.fails(candidate):
            return candidate
        return schedule

    def fewer_jobs(self, schedule: Schedule) -> Schedule:
        while schedule.rate / 2 >= MIN_RATE and not self.exhausted:
            candidate = replace(schedule, rate=round(schedule.rate / 2, 3))
            if not self.fails(candidate):
                break
            schedule = candidate
        return schedule

    def shorter_faults(self, schedule: Schedule) -> Schedule:
        for i in range(len(schedule.faults)):
            while schedule.faults[i].lasts / 2 >= MIN_LASTS_S and not self.exhausted:
                faults = list(schedule.faults)
                faults[i] = replace(faults[i], lasts=round(faults[i].lasts / 2, 2))
                candidate = schedule.with_faults(faults)
                if not self.fails(candidate):
                    break
                schedule = candidate
        return schedule

    def shrink(self, schedule: Schedule) -> Shrunk:
        # free edits, not yet verified: only a schedule a rerun saw fail becomes ``best``
        schedule = trimmed(self.pin_outages(schedule))
        for step in (self.suspected, self.ddmin, self.pinned, self.shorter, self.fewer_jobs, self.shorter_faults):
            if self.exhausted:
                break
            schedule = step(schedule)
        return Shrunk(self.best.schedule, self.best, self.reruns, round(time.monotonic() - self.started, 1),
                      self.exhausted)


def suspect_candidates(found: list[Suspect], schedule: Schedule) -> list[tuple[frozenset[int], str]]:
    """The fault sets to try, in order: each delaying suspect with the suspected defences, then all suspects.

    Only if no suspect delays anything is each (a defence) tried alone.
    """
    if not found:
        return []
    defences = [s.index for s in found if not schedule.faults[s.index].extends_bound]
    causes = [s for s in found if schedule.faults[s.index].extends_bound] or found
    candidates: list[tuple[frozenset[int], str]] = []
    for suspect in causes[:MAX_ALONE]:
        indices = frozenset({suspect.index, *defences})
        if any(indices == seen for seen, _ in candidates):
            continue
        kept = f" with the defence(s) off {sorted(indices - {suspect.index})}" if len(indices) > 1 else ""
        candidates.append((indices, f"suspect fault {suspect.index} alone{kept} (nearest to job "
                                    f"{suspect.job_id}: {suspect.gap:g} s)"))
    together = frozenset(s.index for s in found)
    if all(together != indices for indices, _ in candidates):
        candidates.append((together, f"the {len(together)} suspects together {sorted(together)}"))
    return candidates


def trimmed(schedule: Schedule) -> Schedule:
    """The schedule ending ``CANDIDATE_TAIL_S`` after its last heal (never longer than it was).

    A fault that switches a defence off does not count by its planned heal:
    the nemesis keeps the defence off past the run's end until the jobs the
    other faults exposed are judged, so it only has to begin before the end.
    """
    if not schedule.faults:
        return schedule
    end = round(_last_moment(schedule) + CANDIDATE_TAIL_S, 2)
    return replace(schedule, duration=min(end, schedule.duration))


def _last_moment(schedule: Schedule) -> float:
    """The last heal of a delaying fault, or the last start of a defence switched off, if later."""
    return max((f.heal_at if f.extends_bound else f.at for f in schedule.faults), default=0.0)


def rerun_cost(schedule: Schedule) -> float:
    """A rerun's worst case, in seconds: a pass runs its duration and settles; a failure ends at the
    first job found stuck, at most the job bound after the later of its last heal and the run's end
    (a defence held off is judged with the jobs, not by its planned heal)."""
    return max(schedule.duration, _last_moment(schedule)) + schedule.job_bound + RERUN_OVERHEAD_S


def _pinned_outage(fault: Planned, faults: tuple[Planned, ...]) -> Planned:
    """``fault`` (an outage "now") waiting for a message in the broker instead.

    Its window opens at the last heal of the faults before it (a backlog
    forms when a fault ends: the messages held meanwhile are sent at once),
    and lasts at least ``PIN_WINDOW_S``; it closes at the planned heal.
    """
    earlier = [f.heal_at for f in faults if f.at < fault.at]
    at = min(fault.at, max(earlier)) if earlier else fault.at
    lasts = round(max(fault.heal_at - at, PIN_WINDOW_S), 2)
    return replace(fault, at=at, lasts=lasts, spec={"fault": "broker_outage", "when": QUEUED})


def _record(window: object) -> dict:
    """What a played fault recorded about its injection (a broker outage: ``waiting``), or {}."""
    fault = getattr(window, "fault", None)
    return dict(getattr(fault, "outage", None) or {})


def _split(items: list[Planned], n: int) -> list[list[Planned]]:
    size, extra = divmod(len(items), n)
    chunks, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        chunks.append(items[start:end])
        start = end
    return [c for c in chunks if c]


def _without(items: list[Planned], chunk: list[Planned]) -> list[Planned]:
    return [item for item in items if item not in chunk]


def _numbered(folder: Path) -> Iterator[Path]:
    n = 0
    while True:
        n += 1
        yield folder / f"{n:02d}"


def shrink_and_print(runner: NightlyRunner, original: Outcome, out: Path, *, budget: float) -> Shrunk:
    """Shrink ``original``'s schedule on ``runner``'s stack; print and save the minimal scenario."""
    folders = _numbered(out / "shrink")
    print(f"shrinking (budget {budget:g} s): reruns on fresh resets of the same stack", flush=True)
    kill_failpoints = NightlySettings.from_config(runner.config).kill_failpoints
    shrinker = Shrinker(lambda s: runner.run_schedule(s, next(folders), title="nightly shrink", fail_fast=True),
                        original, budget, log=lambda line: print(line, flush=True), kill_failpoints=kill_failpoints)
    shrunk = shrinker.shrink(original.schedule)
    result = next(r for r in shrunk.outcome.verdict.results if r.valid is False and r.name in shrinker.wanted)
    source = scenario_source(shrunk.schedule, invariant=result.name, message=result.message,
                             reruns=shrunk.reruns)
    minimal = out / "minimal"
    minimal.mkdir(parents=True, exist_ok=True)
    (minimal / "schedule.json").write_text(shrunk.schedule.to_json())
    path = minimal / f"test_nightly_seed_{shrunk.schedule.seed}_minimal.py"
    path.write_text(source)
    (minimal / "shrink.json").write_text(json.dumps({
        "reruns": shrunk.reruns, "seconds": shrunk.seconds, "exhausted": shrunk.exhausted,
        "faults": len(shrunk.schedule.faults), "invariant": result.name, "scenario": path.name}, indent=1) + "\n")
    why = "budget ran out" if shrunk.exhausted else "no smaller schedule fails"
    print(f"\nshrunk to {len(shrunk.schedule.faults)} fault(s), {shrunk.schedule.duration:g} s, "
          f"{shrunk.schedule.jobs} jobs in {shrunk.reruns} reruns ({shrunk.seconds:g} s; {why}).\n"
          f"minimal scenario ({path}):\n")
    print(source, flush=True)
    return shrunk
