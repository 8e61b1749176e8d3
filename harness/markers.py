"""The scenario markers, read and checked once, at collection.

``@pytest.mark.jobquake(...)`` chooses what is judged after a scenario;
``@pytest.mark.catches(mutant, invariant=...)`` names the bug a scenario
exists to catch. Both are only meaningful with the ``jq`` fixture, which
is what judges. ``problems(item, mutants)`` lists everything wrong with one
test's markers, each as a sentence naming what is known, so that a typo
(``chekcs=``), an unknown checker or option, or a forgotten fixture stops
the run at collection instead of passing silently or failing at teardown.
"""
from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import pytest

from harness.checks.generic import GENERIC_INVARIANTS
from harness.checks.registry import CHECKERS, GLOBAL_INVARIANTS
from harness.checks.runner import Checker, checker_name

JOBQUAKE = "jobquake"
CATCHES = "catches"
FIXTURE = "jq"
# the jobquake marker's keyword arguments
KWARGS = ("checks", "skip_checks", "settle", "options", "expect_paid_calls", "expect_jobs", "replicas")
EXPECTATIONS = {"expect_paid_calls": "paid_calls", "expect_jobs": "jobs"}


@dataclass(frozen=True)
class ScenarioOptions:
    """What a test's jobquake marker asks for (defaults without one)."""

    checks: tuple[Any, ...] = ()
    skip_checks: tuple[str, ...] = ()
    settle: bool | float = True
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    expect: Mapping[str, int] = field(default_factory=dict)
    replicas: Mapping[str, int] = field(default_factory=dict)  # app process -> how many run in this test

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> "ScenarioOptions":
        expect = {EXPECTATIONS[k]: int(kwargs[k]) for k in EXPECTATIONS if kwargs.get(k) is not None}
        return cls(checks=tuple(kwargs.get("checks") or ()), skip_checks=tuple(kwargs.get("skip_checks") or ()),
                   settle=kwargs.get("settle", True), options=dict(kwargs.get("options") or {}),
                   expect=expect, replicas=dict(kwargs.get("replicas") or {}))

    def checkers(self) -> list[Checker]:
        """The global invariants not skipped, then the ones asked for (by name or as functions)."""
        chosen = [c for c in GLOBAL_INVARIANTS if checker_name(c) not in self.skip_checks]
        return chosen + [CHECKERS[c] if isinstance(c, str) else c for c in self.checks]


def _known(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))


def _kwarg_problems(kwargs: Mapping[str, Any]) -> list[str]:
    found = [f"jobquake(): unknown keyword {key!r}; known: {', '.join(KWARGS)}"
             for key in kwargs if key not in KWARGS]
    for key in ("checks", "skip_checks"):
        value = kwargs.get(key, ())
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            found.append(f"jobquake({key}=...): expected a list of checker names, got {value!r}")
    settle = kwargs.get("settle", True)
    if not isinstance(settle, bool) and (not isinstance(settle, (int, float)) or settle <= 0):
        found.append(f"jobquake(settle=...): expected True, False or a positive number of seconds, got {settle!r}")
    for key in EXPECTATIONS:
        value = kwargs.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            found.append(f"jobquake({key}=...): expected a count >= 0, got {value!r}")
    replicas = kwargs.get("replicas", {})
    if not isinstance(replicas, Mapping) or not all(
            isinstance(k, str) and isinstance(n, int) and not isinstance(n, bool) and n >= 1
            for k, n in replicas.items()):
        found.append(f"jobquake(replicas=...): expected {{process: count >= 1}}, got {replicas!r}")
    if not isinstance(kwargs.get("options", {}), Mapping):
        found.append(f"jobquake(options=...): expected {{checker: {{option: value}}}}, got {kwargs['options']!r}")
    return found


def _option_problems(name: str, checker: Checker, given: Any) -> list[str]:
    if not isinstance(given, Mapping):
        return [f"jobquake(options={{{name!r}: ...}}): expected a dict of options, got {given!r}"]
    params = list(inspect.signature(checker).parameters)[2:]  # after (history, snapshot)
    found = [f"jobquake(options): checker {name!r} has no option {key!r}; it has: {', '.join(params) or 'none'}"
             for key in given if key not in params]
    declared = _declared_types(checker)
    for key, value in given.items():
        if key in params and key in declared and not _matches(value, declared[key]):
            found.append(f"jobquake(options={{{name!r}: {{{key!r}: {value!r}}}}}): expected "
                         f"{_type_name(declared[key])}, got {type(value).__name__}")
    return found


def _declared_types(checker: Checker) -> dict[str, Any]:
    """The checker's annotated option types (none when they cannot be resolved: nothing to check)."""
    try:
        return typing.get_type_hints(checker)
    except Exception:  # noqa: BLE001 - a scenario's own checker with annotations we cannot resolve
        return {}


def _matches(value: Any, kind: Any) -> bool:
    """Whether ``value`` fits ``kind``: the annotations checker options use (numbers, strings, flags,
    lists of strings, mappings of numbers, optional and union of those); any other kind is not checked."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is type(None) or kind is None:
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in args)
    if kind is bool:
        return isinstance(value, bool)
    if kind in (int, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is str:
        return isinstance(value, str)
    if origin in (collections.abc.Sequence, list, tuple):
        return isinstance(value, (list, tuple)) and all(_matches(v, args[0]) for v in value) if args else True
    if origin in (collections.abc.Mapping, dict):
        return isinstance(value, Mapping) and (not args or all(_matches(v, args[1]) for v in value.values()))
    return True


def _type_name(kind: Any) -> str:
    text = str(kind).replace("typing.", "").replace("collections.abc.", "")
    return text.replace("<class '", "").replace("'>", "").replace("NoneType", "None")


def jobquake_problems(kwargs: Mapping[str, Any]) -> list[str]:
    """Everything wrong with one jobquake marker's keyword arguments."""
    found = _kwarg_problems(kwargs)
    if found:
        return found
    for key in ("checks", "skip_checks"):
        found += [f"jobquake({key}=...): no checker named {name!r}; known: {_known(CHECKERS)}"
                  for name in kwargs.get(key, ()) if isinstance(name, str) and name not in CHECKERS]
    if found:
        return found
    opts = ScenarioOptions.from_kwargs(kwargs)
    chosen = {checker_name(c): c for c in opts.checkers()}
    if not chosen:
        found.append("jobquake(): this scenario runs no checker (every global invariant skipped, "
                     "none asked for): nothing would be judged")
    known = {**CHECKERS, **chosen}
    for name, given in opts.options.items():
        if name not in known:
            found.append(f"jobquake(options): no checker named {name!r}; known: {_known(known)}")
        else:
            found += _option_problems(name, known[name], given)
    return found


def catches_problems(args: tuple[Any, ...], kwargs: Mapping[str, Any], mutants: Iterable[str] | None) -> list[str]:
    """Everything wrong with one catches marker; ``mutants`` None when the app names none."""
    found = [f"catches(): unknown keyword {key!r}; known: invariant" for key in kwargs if key != "invariant"]
    if len(args) != 1 or not isinstance(args[0], str):
        return found + [f"catches(): expected one mutant name, got {args!r}"]
    known = list(mutants) if mutants is not None else None
    if known is not None and args[0] not in known:
        found.append(f"catches({args[0]!r}): no such mutant; known: {_known(known)}")
    invariant = kwargs.get("invariant")
    if invariant is None:
        found.append(f"catches({args[0]!r}): name the invariant that fails (invariant=...)")
    elif invariant not in CHECKERS:
        found.append(f"catches(invariant={invariant!r}): no checker of that name; known: {_known(CHECKERS)}")
    return found


def problems(item: Any, mutants: Iterable[str] | None) -> list[str]:
    """Every marker problem of one collected test (empty when it has no jobquake marker)."""
    marks = [m for m in item.iter_markers() if m.name in (JOBQUAKE, CATCHES)]
    if not marks:
        return []
    found = []
    if FIXTURE not in getattr(item, "fixturenames", ()):
        names = ", ".join(sorted({f"@pytest.mark.{m.name}" for m in marks}))
        found.append(f"{names} without the {FIXTURE!r} fixture: nothing would judge this scenario "
                     f"(add {FIXTURE} to its arguments)")
    for mark in marks:
        if mark.name == JOBQUAKE:
            found += [] if mark.args == () else [f"jobquake(): takes keyword arguments only, got {mark.args!r}"]
            found += jobquake_problems(mark.kwargs)
        else:
            found += catches_problems(mark.args, mark.kwargs, mutants)
    return found or _uncheckable_catches(item)


def _uncheckable_catches(item: Any) -> list[str]:
    """A catches marker naming an invariant the scenario does not run could never catch its mutant.

    A generic invariant the scenario does not skip runs wherever the run has its evidence (a retry,
    a refused submission...), which the mutant may be the one to produce: it may be named unlisted.
    """
    marker = item.get_closest_marker(JOBQUAKE)
    options = ScenarioOptions.from_kwargs(marker.kwargs if marker else {})
    runs = {checker_name(c) for c in options.checkers()}
    runs |= {checker_name(c) for c in GENERIC_INVARIANTS} - set(options.skip_checks)
    return [f"catches({m.args[0]!r}, invariant={m.kwargs['invariant']!r}): this scenario does not run that "
            f"checker (it runs: {_known(runs)}); add it to jobquake(checks=[...])"
            for m in item.iter_markers(CATCHES) if m.kwargs.get("invariant") not in runs]


class MarkerCheck:
    """The plugin part that checks each collected test's markers; a problem is a collection error."""

    def __init__(self, mutants_spec: str, root: Path):
        self.mutants_spec = mutants_spec
        self.root = root
        self._mutants: list[str] | None | bool = False  # False: not loaded yet

    def mutant_names(self) -> list[str] | None:
        """The app's mutants (config ``mutants``), None when it names none or they cannot be loaded."""
        if self._mutants is False:
            self._mutants = None
            if self.mutants_spec:
                from harness.config import load_callable

                try:
                    self._mutants = list(load_callable(self.mutants_spec, "mutants", self.root, kind="mapping"))
                except Exception:  # noqa: BLE001 - `jobquake mutants` reports a broken catalogue itself
                    self._mutants = None
        return self._mutants  # type: ignore[return-value]

    @pytest.hookimpl(wrapper=True)
    def pytest_pycollect_makeitem(self, collector: pytest.Collector, name: str, obj: object):
        result = yield
        items = result if isinstance(result, list) else [result]
        found = [f"{item.nodeid}: {problem}" for item in items if isinstance(item, pytest.Item)
                 for problem in problems(item, self.mutant_names())]
        if found:  # a collection error: the scenario would not be judged as its author thinks
            raise collector.CollectError("jobquake markers:\n  " + "\n  ".join(found))
        return result

