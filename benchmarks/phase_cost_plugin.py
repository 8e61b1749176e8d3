"""pytest plugin for ``phase_cost.py``: the machine's busy CPU-s and the wall seconds of each phase.

Loaded with ``-p phase_cost_plugin`` (this folder on the path) and
``PHASE_COST_OUT`` naming the JSON file it writes at the end (not a ``JOBQUAKE_`` name: the
harness reads every one of those as a setting). The
test phases come from pytest's hooks; the phases inside them from wrapping
the harness functions that run them (the stack's reset, the settle, the
evidence's collection, the invariants, the artifacts), as seen from where
the verdict calls them.
"""
from __future__ import annotations

import atexit
import functools
import json
import os
import time
from typing import Any, Callable, Iterator

import pytest

import harness.run
import harness.stack.stack
import harness.verdict
from mutants_full import machine_cpu as busy  # this folder: the machine's CPU-s so far (/proc/stat)

phases: dict[str, dict[str, float]] = {}


def add(name: str, cpu: float, wall: float) -> None:
    figures = phases.setdefault(name, {"cpu_s": 0.0, "wall_s": 0.0, "count": 0})
    figures["cpu_s"] += cpu
    figures["wall_s"] += wall
    figures["count"] += 1


def measured(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        cpu, wall = busy(), time.monotonic()
        try:
            return function(*args, **kwargs)
        finally:
            add(name, busy() - cpu, time.monotonic() - wall)
    return wrapper


harness.stack.stack.Stack.reset = measured("stack reset", harness.stack.stack.Stack.reset)
harness.run.Run.settle = measured("settle", harness.run.Run.settle)
harness.verdict.collect = measured("evidence", harness.verdict.collect)
harness.verdict.Verdicts._checked = staticmethod(measured("invariants", harness.verdict.Verdicts._checked))
harness.verdict.write_artifacts = measured("artifacts", harness.verdict.write_artifacts)


def _phase(name: str) -> Callable[..., Iterator[None]]:
    @pytest.hookimpl(wrapper=True)
    def hook(item: pytest.Item) -> Iterator[None]:
        cpu, wall = busy(), time.monotonic()
        try:
            return (yield)
        finally:
            add(name, busy() - cpu, time.monotonic() - wall)
    return hook


pytest_runtest_setup = _phase("setup")
pytest_runtest_call = _phase("call")
pytest_runtest_teardown = _phase("teardown")
_started = (busy(), time.monotonic())


@atexit.register
def _write() -> None:
    phases["session"] = {"cpu_s": busy() - _started[0], "wall_s": time.monotonic() - _started[1], "count": 1}
    for name in ("stack reset", "settle", "evidence", "invariants", "artifacts", "setup", "call", "teardown"):
        phases.setdefault(name, {"cpu_s": 0.0, "wall_s": 0.0, "count": 0})
    path = os.environ.get("PHASE_COST_OUT")
    if path:
        with open(path, "w") as out:
            json.dump(phases, out, indent=1)
