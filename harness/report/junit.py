"""JUnit XML properties for a test's verdict, for pytest's ``record_property``::

    for name, value in junit_properties(verdict, seed=seed, artifacts_path=path):
        record_property(name, value)

CI dashboards then show, per test, the verdict of every invariant.
"""
from __future__ import annotations

import os

from harness.checks.result import Verdict, mark

PREFIX = "jobquake"


def junit_properties(verdict: Verdict, seed: int | None = None,
                     artifacts_path: str | os.PathLike[str] | None = None,
                     prefix: str = PREFIX) -> list[tuple[str, str]]:
    """``[(name, value)]``: the verdict, each invariant's mark, messages of the failed ones."""
    props = [(f"{prefix}.verdict", mark(verdict.valid))]
    for result in verdict.results:
        props.append((f"{prefix}.{result.name}", mark(result.valid)))
        if result.valid is not True:
            props.append((f"{prefix}.{result.name}.message", result.message))
    if seed is not None:
        props.append((f"{prefix}.seed", str(seed)))
    if artifacts_path is not None:
        props.append((f"{prefix}.artifacts", os.fspath(artifacts_path)))
    return props


def invalid_in(properties: list[tuple[str, str]], prefix: str = PREFIX) -> set[str]:
    """The invariants ``junit_properties`` marked invalid in ``properties`` (a test's user properties)."""
    marks = {key[len(prefix) + 1:]: value for key, value in properties if key.startswith(f"{prefix}.")}
    return {name for name, value in marks.items() if value == mark(False) and "." not in name and name != "verdict"}
