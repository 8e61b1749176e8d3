"""The machine-readable report of a run: one JSON file, every test's verdict.

Layout::

    {"valid": true | false | "unknown",            # merged over all tests
     "summary": {"tests": 3, "valid": 1, "invalid": 1, "unknown": 1},
     "meta": {...},                                # seed, time scale, ... as given
     "tests": {"<nodeid>": <Verdict.to_dict()>, ...}}
"""
from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any, Mapping

from harness._safe_files import write_replacing

from harness.checks.result import Verdict, mark, merge_valid


def results_to_json(results_per_test: Mapping[str, Verdict],
                    meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report as a dict (see the module docstring)."""
    counts = Counter(mark(v.valid) for v in results_per_test.values())
    return {
        "valid": merge_valid(v.valid for v in results_per_test.values()),
        "summary": {"tests": len(results_per_test), "valid": counts["valid"],
                    "invalid": counts["invalid"], "unknown": counts["unknown"]},
        "meta": dict(meta or {}),
        "tests": {nodeid: verdict.to_dict() for nodeid, verdict in results_per_test.items()},
    }


def write_json(path: str | os.PathLike[str], results_per_test: Mapping[str, Verdict],
               meta: Mapping[str, Any] | None = None) -> None:
    """Write the report to ``path`` (parents created), replacing it atomically."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_replacing(path, json.dumps(results_to_json(results_per_test, meta), indent=1, default=str))


def read_json(path: str | os.PathLike[str]) -> dict[str, Verdict]:
    """The verdicts of a report written by ``write_json``, by test id."""
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    return {nodeid: Verdict.from_dict(v) for nodeid, v in raw.get("tests", {}).items()}
