"""Run several checkers over one history and compose their results.

A checker is any callable ``check(history, snapshot, **options) -> Result``;
its name is ``checker.invariant_name`` (set by ``@invariant``), else its
``__name__``. A checker declares the evidence it needs
(``@invariant(name, needs=(PAID_CALLS,))``, see ``needs.py``): when some is
missing it is not run and its result is ``unknown`` with the reason. A
checker that raises yields ``unknown`` with the exception in ``details``
instead of crashing the run::

    verdict = run_checks(GLOBAL_INVARIANTS, history, snapshot,
                         options={"timeout_labelled": {"deadline": 2.0}})
    verdict.valid   # False if any invalid, "unknown" if any unknown, else True
"""
from __future__ import annotations

import functools
import traceback
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, TypeVar

from harness.checks.needs import Need
from harness.checks.result import UNKNOWN, Result, Verdict
from harness.checks.timeline import job_timeline
from harness.history.history import History
from harness.history.snapshot import Snapshot

Checker = Callable[..., Result]
F = TypeVar("F", bound=Callable[..., Result])


def invariant(name: str, needs: tuple[Need, ...] = ()) -> Callable[[F], F]:
    """Name a checker function (the name used in reports and in ``options``) and its evidence."""
    def mark(fn: F) -> F:
        fn.invariant_name = name  # type: ignore[attr-defined]
        fn.needs = tuple(needs)  # type: ignore[attr-defined]
        return fn
    return mark


def _unwrapped(checker: Checker) -> Checker:
    while isinstance(checker, functools.partial):
        checker = checker.func
    return checker


def checker_name(checker: Checker) -> str:
    """The invariant name of a checker (also through ``functools.partial``)."""
    checker = _unwrapped(checker)
    return getattr(checker, "invariant_name", None) or getattr(checker, "__name__", repr(checker))


def checker_needs(checker: Checker) -> tuple[Need, ...]:
    """The evidence a checker declared it needs (none for a plain function)."""
    return tuple(getattr(_unwrapped(checker), "needs", ()))


def missing_evidence(checker: Checker, name: str, history: History,
                     snapshot: Snapshot | None) -> Result | None:
    """``unknown`` naming the first need of ``checker`` the evidence does not meet; None if all are met."""
    for need in checker_needs(checker):
        missing = need.missing(history, snapshot)
        if missing is not None:
            return Result(name, UNKNOWN, missing.reason, counterexample=list(missing.shown),
                          details={"missing_evidence": need.name, "needs": need.description})
    return None


def _run_one(checker: Checker, name: str, history: History, snapshot: Snapshot | None,
             options: Mapping[str, Any]) -> Result:
    try:
        missing = missing_evidence(checker, name, history, snapshot)
        if missing is not None:
            return missing
        result = checker(history, snapshot, **options)
        if not isinstance(result, Result):
            raise TypeError(f"checker returned {type(result).__name__}, not Result")
    except Exception as exc:  # noqa: BLE001 - a broken checker must not hide the other verdicts
        return Result(name, UNKNOWN, f"checker {name} raised {type(exc).__name__}: {exc}",
                      details={"exception": repr(exc), "traceback": traceback.format_exc()})
    return result


def run_checks(checkers: Iterable[Checker], history: History, snapshot: Snapshot | None,
               options: Mapping[str, Mapping[str, Any]] | None = None) -> Verdict:
    """Run each checker (with ``options[name]`` as keyword arguments) and compose a Verdict."""
    options = options or {}
    results = []
    used: dict[str, dict[str, Any]] = {}
    for checker in checkers:
        name = checker_name(checker)
        opts = dict(options.get(name, {}))
        used[name] = opts
        result = _run_one(checker, name, history, snapshot, opts)
        if result.valid is not True and not result.timeline:
            result = replace(result, timeline=job_timeline(history, result.job_id))
        results.append(result)
    return Verdict(tuple(results), {name: opts for name, opts in used.items() if opts})
