"""``DuplicateSubmission``: the client sends the same upload again.

A gateway (or a user's browser) gives up waiting for the first answer and
sends the request once more, although the first one may well have been
accepted. ``submit`` is the scenario's own client call; each call is
recorded as a ``fault ok submission`` event with its number and result, so
the checker of lost / duplicated jobs can line them up. There is nothing
to heal: a request cannot be unsent.
"""
from __future__ import annotations

from typing import Any, Callable

from harness.faults import _params as p
from harness.faults.base import Fault

__all__ = ["DuplicateSubmission", "SUBMISSION"]

SUBMISSION = "submission"


class DuplicateSubmission(Fault):
    """Call ``submit()`` ``times`` times in a row (the original and its duplicates)."""

    name = "duplicate_submission"

    def __init__(self, submit: Callable[[], Any] | str, times: int = 2):
        super().__init__()
        self.submit = p.a_callable(submit, "submit", self.name)
        if isinstance(times, bool) or not isinstance(times, int) or times < 2:
            raise self.error(f"times must be an int >= 2 (one submission is no duplicate), got {times!r}")
        self.times = times
        self.results: list[Any] = []

    def params(self) -> dict[str, Any]:
        return {"submit": p.describe_callable(self.submit), "times": self.times}

    def _inject(self) -> dict[str, Any]:
        self.results = []
        for number in range(1, self.times + 1):
            result = self.submit()
            self.results.append(result)
            self.record("ok", SUBMISSION, number=number, result=result)
        return {"submissions": self.times}

    def _heal(self) -> dict[str, Any]:
        return {}
