"""Invariant: a sweep run handled every eligible row and said so truthfully.

From ``sweep`` events (the last event of each ``run_id`` is its final
report): the run ended (``state`` in ``ended_states``, default
``("done",)``); every eligible row was processed or counted as failed; the
summary's counts equal the lists it summarises. A poison row must land in
``failed``, not vanish. No sweep event at all gives ``unknown``: the
scenario asked for a sweep and none was recorded.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History
from harness.history.snapshot import Snapshot

NAME = "sweep_complete"


def _final_reports(history: History) -> dict[str, Event]:
    runs: dict[str, Event] = {}
    for event in history.by_source(v.SWEEP, name=v.SWEEP):
        runs[str(event.data.get("run_id"))] = event  # later events supersede earlier ones
    return runs


def _problems(data: Mapping[str, Any], ended_states: Sequence[str]) -> list[str]:
    eligible = [str(r) for r in data.get("eligible") or []]
    processed = {str(r) for r in data.get("processed") or []}
    failed = {str(r) for r in data.get("failed") or []}
    summary = data.get("summary") or {}
    problems = []
    if data.get("state") not in ended_states:
        problems.append(f"run did not end (state {data.get('state')!r})")
    missing = [r for r in eligible if r not in processed and r not in failed]
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        problems.append(f"{len(missing)} eligible row(s) neither processed nor failed: {shown}")
    for key, rows in (("processed", processed), ("failed", failed)):
        if summary.get(key) != len(rows):
            problems.append(f"summary says {summary.get(key)} {key}, the run {key} {len(rows)}")
    return problems


@invariant(NAME)
def sweep_complete(history: History, snapshot: Snapshot | None,
                   ended_states: Sequence[str] = ("done",)) -> Result:
    """Every sweep run ended, covered every eligible row, and reported true counts."""
    runs = _final_reports(history)
    if not runs:
        return unknown_result(NAME, "no sweep run was recorded")
    violations = []
    for run_id, event in runs.items():
        problems = _problems(event.data, ended_states)
        if problems:
            violations.append({"run_id": run_id, "at": history.relative(event.t),
                               "state": event.data.get("state"), "problems": problems})
    if violations:
        first = violations[0]
        return invalid_result(NAME, f"{len(violations)} of {len(runs)} sweep run(s) incomplete; "
                              f"run {first['run_id']}: {'; '.join(first['problems'])}", violations)
    return valid_result(NAME, f"{len(runs)} sweep run(s) complete", runs=len(runs))
