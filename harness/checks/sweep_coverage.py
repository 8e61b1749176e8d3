"""Invariant: over several runs, a sweep handles every row its own predicate selects.

``sweep_complete`` judges each run by what that run says it was given: the
rows it listed must all be processed or counted failed. A run can be
complete by its own account and still never look at a row it should: a row
that failed once for a passing reason (its lock held by someone editing it,
a database blip) and that every later run leaves out ("poison, leave it to
a person"), or every row below the point the last run stopped at. Each run
reports ``done``; the row waits for ever.

**Evidence.** The ``sweep`` events of each run (``eligible``: the rows it
listed, plus ``unreached`` for a run its deadline stopped; ``started``: when
it began, epoch seconds; ``state``), and one ``sweep predicate`` event the
harness recorded after the scenario settled: the rows the sweep's own
predicate (config ``sweep_predicate``) still selects, i.e. rows no run has
handled, and, where the predicate's query says it, when each last changed.

**Rule.** A row the predicate still selects at the end matched it when a
run listed it, and, unchanged since, when any run started after its last
change. Every run that started after such a moment and ended ``done``
must have listed it: a finished run that left out a row it should have
seen is invalid (a row a passing failure made an earlier run skip, every
row below the point the last run stopped at, a run whose own query
differs from its predicate). A row that fails in every run (listed each
time, counted failed) is the per-run invariant's business; a row no run
listed and whose last change is not known is not judged.

``unknown`` without a predicate sample (config names no ``sweep_predicate``,
or the scenario recorded no run), or with one run and no row's age
(nothing to judge across runs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history.snapshot import Snapshot
from harness.history import vocabulary as v
from harness.history.history import History

NAME = "sweeps_cover_predicate"


@dataclass(frozen=True)
class SweepRun:
    """One run's final report: when it started (epoch s), how it ended, the rows it listed."""

    run_id: str
    started: float
    state: str | None
    listed: frozenset[str]


def sweep_runs(history: History) -> list[SweepRun]:
    """Each run's last report, by start (runs whose start was not recorded are left out)."""
    last: dict[str, dict[str, Any]] = {}
    for event in history.by_source(v.SWEEP, name=v.SWEEP):
        last[str(event.data.get("run_id"))] = event.data  # a later report supersedes an earlier one
    runs = [SweepRun(run_id, float(data["started"]), data.get("state"),
                     frozenset(str(r) for key in ("eligible", "unreached") for r in data.get(key) or ()))
            for run_id, data in last.items() if data.get("started") is not None]
    return sorted(runs, key=lambda r: r.started)


def _still_selected(history: History) -> list[str] | None:
    samples = history.by_source(v.SWEEP, name=v.PREDICATE)
    return None if not samples else [str(r) for r in samples[-1].data.get("rows") or ()]


def _changed(history: History) -> dict[str, float]:
    """When each still-selected row last changed (epoch s), where the predicate's query says."""
    samples = history.by_source(v.SWEEP, name=v.PREDICATE)
    return {str(r): float(at) for r, at in (samples[-1].data.get("changed") or {}).items()} if samples else {}


def _predicate(history: History, snapshot: Snapshot | None) -> Missing | None:
    if _still_selected(history) is not None:
        return None
    return Missing("the sweep's predicate was not read after the scenario (config names no sweep_predicate, "
                   "or no sweep run was recorded)")


def _runs(history: History, snapshot: Snapshot | None) -> Missing | None:
    count = len(sweep_runs(history))
    if count >= 2 or (count == 1 and _changed(history)):
        return None
    return Missing(f"{count} sweep run(s) with a recorded start, and no row's age: nothing to judge across runs")


SWEEP_PREDICATE = Need("sweep_predicate", "the rows the sweep's own predicate selects once the app settled",
                       _predicate)
SWEEP_RUNS = Need("sweep_runs", "sweep runs, each with the rows it listed and when it started (two or more, "
                  "or one and the rows' ages)", _runs)


def _left_out(row: str, runs: list[SweepRun], changed_at: float | None) -> dict[str, Any] | None:
    """The first finished run that left ``row`` out although it matched when the run started; None if none."""
    first = next((run for run in runs if row in run.listed), None)
    since = [t for t in (first.started if first else None, changed_at) if t is not None]
    if not since:
        return None
    matched = min(since)
    for run in runs:
        if run.started > matched and run.state == "done" and row not in run.listed:
            how = (f"run {first.run_id} listed it" if first is not None and matched == first.started
                   else "it was last changed then")
            return {"row": row, "matched_at": matched, "listed_by": None if first is None else first.run_id,
                    "left_out_by": run.run_id, "left_out_listed": len(run.listed),
                    "why": f"row {row} matched the predicate before run {run.run_id} started ({how}) and still "
                           f"does; run {run.run_id} ended done and left it out"}
    return None


@invariant(NAME, needs=(SWEEP_PREDICATE, SWEEP_RUNS))
def sweeps_cover_predicate(history: History, snapshot: Snapshot | None) -> Result:
    """Every row the sweep's predicate still selects was listed by each finished run after the first to list it."""
    runs, changed = sweep_runs(history), _changed(history)
    still = _still_selected(history) or []
    violations = [found for row in still if (found := _left_out(row, runs, changed.get(row))) is not None]
    if violations:
        return invalid_result(NAME, f"{len(violations)} row(s) the sweep's predicate still selects were left out "
                              f"by a later finished run; first: {violations[0]['why']}", violations,
                              runs=len(runs), still_selected=len(still))
    listed = set().union(*(run.listed for run in runs))
    never = sorted(set(still) - listed - set(changed))
    return valid_result(NAME, f"{len(runs)} sweep runs over {len(listed)} row(s): each row the predicate still "
                        f"selects was listed by every finished run after it matched"
                        + (f" ({len(never)} never listed, not judged)" if never else ""),
                        runs=len(runs), rows=len(listed), still_selected=len(still), never_listed=never)
