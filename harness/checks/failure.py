"""Turn a failed verdict into what a person reads: text, and exceptions for pytest.

``format_failure(verdict, artifacts_path, seed)`` gives, for each invalid
(then unknown) invariant: its name and message, the counterexample, a small
timeline of the job involved (seconds since the run's first event), the
artifacts folder and the line that replays the run::

    every_job_terminal: 1 of 3 jobs never reached a terminal state ...
      counterexample:
        job_id=j2 state=running age_s=12.4 ...
      timeline of job j2:
           +0.102s  submit    ok     submit  {...}
      ...
    artifacts: /tmp/.../test_kill_worker
    replay: pytest 'tests/x.py::test_kill_worker' --jobquake-seed=1234

``violation_error(...)`` returns an ``InvariantViolation`` for one invalid
result, an ``ExceptionGroup`` of them for several, or None. With
``unknown_fails=True`` an undecided result counts too, as an
``InvariantUnknown`` (its reason says which evidence was missing).
"""
from __future__ import annotations

import os
from typing import Any

from harness.checks.result import Result, Verdict, mark
from harness.checks.timeline import format_timeline
from harness.errors import HarnessError

FIELD_WIDTH = 120


class InvariantViolation(HarnessError):
    """An invariant did not hold; keeps the result, the artifacts path and the seed."""

    def __init__(self, message: str, *, result: Result, artifacts_path: str | None = None,
                 seed: int | None = None):
        super().__init__(message)
        self.result = result
        self.artifacts_path = artifacts_path
        self.seed = seed


class InvariantUnknown(InvariantViolation):
    """An invariant could not be decided: its evidence was missing, or its checker failed."""


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    text = repr(value) if isinstance(value, str) and " " in value else str(value)
    return text if len(text) <= FIELD_WIDTH else text[: FIELD_WIDTH - 1] + "…"


def format_counterexample(items: list[dict[str, Any]], indent: str = "    ") -> list[str]:
    """One ``key=value ...`` line per counterexample item (None values left out)."""
    return [indent + " ".join(f"{k}={_value(v)}" for k, v in item.items() if v is not None)
            for item in items]


def replay_line(seed: int | None, nodeid: str | None = None) -> str:
    """The command that replays a run: ``pytest 'NODEID' --jobquake-seed=N``."""
    target = f"pytest {nodeid!r} " if nodeid else "pytest "
    return f"{target}--jobquake-seed={seed}" if seed is not None else f"{target}(no seed recorded)"


def format_result(result: Result) -> list[str]:
    """The lines for one non-valid result."""
    lines = [f"{result.name} [{mark(result.valid)}]: {result.message}"]
    if result.counterexample:
        lines += ["  counterexample:", *format_counterexample(result.counterexample)]
    if result.timeline:
        lines += [f"  timeline of job {result.job_id} (s since the run's first event):",
                  *format_timeline(result.timeline)]
    if "exception" in result.details:
        lines.append(f"  checker error: {result.details['exception']}")
    return lines


def format_failure(verdict: Verdict, artifacts_path: str | os.PathLike[str] | None,
                   seed: int | None, nodeid: str | None = None) -> str:
    """The report of every invalid, then unknown, invariant, with artifacts and replay line."""
    lines = []
    for result in verdict.invalid() + verdict.unknown():
        lines += format_result(result) + [""]
    if not lines:
        lines = [f"all {len(verdict.results)} invariants held", ""]
    lines.append(f"artifacts: {artifacts_path if artifacts_path is not None else '(not kept)'}")
    lines.append(f"replay: {replay_line(seed, nodeid)}")
    return "\n".join(lines)


def violation_error(verdict: Verdict, artifacts_path: str | os.PathLike[str] | None = None,
                    seed: int | None = None, nodeid: str | None = None,
                    unknown_fails: bool = False) -> BaseException | None:
    """An exception for the invalid (and, with ``unknown_fails``, undecided) results, or None."""
    path = None if artifacts_path is None else str(artifacts_path)
    tail = f"\nartifacts: {path or '(not kept)'}\nreplay: {replay_line(seed, nodeid)}"
    failing = [(InvariantViolation, r) for r in verdict.invalid()]
    if unknown_fails:
        failing += [(InvariantUnknown, r) for r in verdict.unknown()]
    errors = [kind("\n".join(format_result(r)) + tail, result=r, artifacts_path=path, seed=seed)
              for kind, r in failing]
    if not errors:
        return None
    if len(errors) == 1:
        return errors[0]
    names = ", ".join(f"{e.result.name} [{mark(e.result.valid)}]" for e in errors)
    return ExceptionGroup(f"{len(errors)} invariants failed: {names}", errors)


def failure_text(exc: BaseException) -> str | None:
    """What a test tool shows for a verdict that failed, without any frame; None for other errors.

    One violation reads as its own message; a group reads as each
    invariant in turn, then the artifacts folder and the replay line once.
    """
    if isinstance(exc, InvariantViolation):
        return str(exc)
    if not isinstance(exc, BaseExceptionGroup) or not exc.exceptions or \
            not all(isinstance(e, InvariantViolation) for e in exc.exceptions):
        return None
    parts, tail = [], ""
    for error in exc.exceptions:
        body, _, tail = str(error).partition("\nartifacts: ")
        parts.append(body)
    return "\n\n".join([exc.message, *parts]) + (f"\n\nartifacts: {tail}" if tail else "")
