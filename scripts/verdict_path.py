"""How often the verdict's path enters each module: one scenario, traced from its body's end to its teardown.

Runs one scenario under pytest (default: the happy path) with a profile hook
(``sys.setprofile``) that is on only while the session judges the run
(``JobquakeSession._judge``) and while it ends it at the ``jq`` fixture's
teardown (``JobquakeSession.finish``). An *entry* into a module is a call
from the code that carries the path — ``pytest_plugin``, ``session``,
``verdict`` — into a function of another harness module (a method or a
property counts for the module that defines it); the session's own two
hooks count once each, as the entries from pytest. A *call up* is a call,
at any depth, from one harness unit into a unit of a higher layer
(``tests/common/architecture.py``). No import runs up the layers
(``tests/quality/test_layers.py``), so each goes through an object or a
function handed down: the run that ``evidence.collect`` reads through its
``Run`` protocol, a predicate given to ``wait_until``.

Prints both for each test the node id selects, and exits 1 when a test's
path enters a module more than twice::

    .venv/bin/python scripts/verdict_path.py [NODEID ...] [--json FILE]
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from tests.common.architecture import LAYER_OF  # noqa: E402
from tests.common.imports import unit_of  # noqa: E402

SPINE = ("harness.pytest_plugin", "harness.session", "harness.verdict")
MAX_ENTRIES = 2
DEFAULT_SCENARIO = "scenarios/test_happy_path.py"


class PathTrace:
    """Counts, per test, entries from the spine and climbs up the layers while the session judges or ends it."""

    def __init__(self) -> None:
        self.tests: dict[str, "PathTrace"] = {}
        self.entries: Counter[str] = Counter()
        self.climbs: Counter[tuple[str, str]] = Counter()
        self.order: list[str] = []

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call" or frame.f_back is None:
            return
        callee = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "")
        if callee == caller or not callee.startswith("harness.") or not caller.startswith("harness."):
            return
        if caller in SPINE:
            self.entries[callee] += 1
            self.order.append(f"{caller} -> {callee}.{frame.f_code.co_name}")
        source, target = unit_of(caller), unit_of(callee)
        if LAYER_OF.get(target, -1) > LAYER_OF.get(source, -1):
            self.climbs[(caller, f"{callee}.{frame.f_code.co_name}")] += 1

    def around(self, method: Any) -> Any:
        """``method`` of the session, traced, and counted as one entry into the session."""
        @functools.wraps(method)
        def traced(session: Any, item: Any, *args: Any, **kwargs: Any) -> Any:
            trace = self.tests.setdefault(item.nodeid, PathTrace())
            trace.entries["harness.session"] += 1
            trace.order.append(f"pytest -> harness.session.{method.__name__}")
            previous = sys.getprofile()
            sys.setprofile(trace.profile)
            try:
                return method(session, item, *args, **kwargs)
            finally:
                sys.setprofile(previous)
        return traced


class TracePlugin:
    def __init__(self, trace: PathTrace):
        self.trace = trace

    def pytest_configure(self, config: pytest.Config) -> None:
        from harness.session import JobquakeSession

        for name in ("_judge", "finish"):
            setattr(JobquakeSession, name, self.trace.around(getattr(JobquakeSession, name)))


def figures_of(trace: PathTrace) -> dict[str, Any]:
    over = {module: n for module, n in trace.entries.items() if n > MAX_ENTRIES}
    return {"entries": dict(sorted(trace.entries.items())), "modules": len(trace.entries),
            "passes": sum(trace.entries.values()), "climbs": sum(trace.climbs.values()),
            "climbs_by_call": {f"{a} -> {b}": n for (a, b), n in sorted(trace.climbs.items())},
            "over_limit": over, "order": trace.order}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodeids", nargs="*", default=[DEFAULT_SCENARIO], metavar="NODEID")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    trace = PathTrace()
    code = pytest.main([*args.nodeids, "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
                       plugins=[TracePlugin(trace)])
    if code != 0:
        print(f"the scenario did not pass (pytest exit {code}): no figures", file=sys.stderr)
        return 2
    figures = {nodeid: figures_of(test) for nodeid, test in trace.tests.items()}
    for nodeid, test in figures.items():
        print(f"\nverdict path of {nodeid}: {test['passes']} entries into {test['modules']} modules, "
              f"{test['climbs']} calls up the layers (to what was handed down)")
        for module, count in test["entries"].items():
            print(f"  {count}  {module}{'   <- more than twice' if count > MAX_ENTRIES else ''}")
        for call, count in test["climbs_by_call"].items():
            print(f"  up x{count}: {call}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 1 if any(test["over_limit"] for test in figures.values()) or not figures else 0


if __name__ == "__main__":
    sys.exit(main())
