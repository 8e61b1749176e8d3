"""What a checker returns (``Result``) and what a run of checkers returns (``Verdict``).

``valid`` is three-valued, as in Jepsen: ``True`` (the invariant held),
``False`` (it was violated: ``counterexample`` shows the smallest evidence)
or ``"unknown"`` (the evidence was missing or the checker itself failed).
Results compose: one ``False`` makes the whole verdict ``False``; otherwise
one ``"unknown"`` makes it ``"unknown"``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping

__all__ = [
    "Result", "UNKNOWN", "Validity", "Verdict", "invalid_result", "mark", "merge_valid", "unknown_result",
    "valid_result",
]

UNKNOWN: Literal["unknown"] = "unknown"
Validity = bool | Literal["unknown"]


def merge_valid(values: Iterable[Validity]) -> Validity:
    """Combine validities: any False wins, then any unknown, else True (also when empty)."""
    seen_unknown = False
    for value in values:
        if value is False:
            return False
        if value != True:  # noqa: E712 - "unknown" and anything odd count as unknown
            seen_unknown = True
    return UNKNOWN if seen_unknown else True


def mark(valid: Validity) -> str:
    """A word for a validity, for people: valid / invalid / unknown."""
    return {True: "valid", False: "invalid"}.get(valid, UNKNOWN)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Result:
    """One invariant's outcome.

    ``counterexample`` holds the smallest evidence of one violation (which
    job, which attempt, which call, when; times are seconds since the first
    event of the history); ``details["violations"]`` lists every violation.
    ``message`` is one line a person can act on. ``timeline`` is filled by
    ``run_checks``: the events of the counterexample's job.
    """

    name: str
    valid: Validity
    message: str
    counterexample: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    timeline: list[dict[str, Any]] = field(default_factory=list)

    @property
    def job_id(self) -> str | None:
        """The job the counterexample is about, if any."""
        return next((str(c["job_id"]) for c in self.counterexample if c.get("job_id") is not None), None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (as stored in verdict.json)."""
        return {"name": self.name, "valid": self.valid, "message": self.message,
                "counterexample": self.counterexample, "details": self.details,
                "timeline": self.timeline}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> "Result":
        """Rebuild a result from its JSON form."""
        return cls(name=raw["name"], valid=raw["valid"], message=raw.get("message", ""),
                   counterexample=list(raw.get("counterexample") or []),
                   details=dict(raw.get("details") or {}), timeline=list(raw.get("timeline") or []))


def valid_result(name: str, message: str, **details: Any) -> Result:
    """The invariant held; ``details`` carries the figures the message quotes."""
    return Result(name, True, message, details=details)


def unknown_result(name: str, message: str, **details: Any) -> Result:
    """The evidence to decide was missing."""
    return Result(name, UNKNOWN, message, details=details)


def invalid_result(name: str, message: str, violations: list[dict[str, Any]],
                   counterexample: list[dict[str, Any]] | None = None, **details: Any) -> Result:
    """An invalid result; the counterexample defaults to the first violation alone."""
    return Result(name, False, message,
                  counterexample=counterexample if counterexample is not None else [violations[0]],
                  details={"violations": violations, **details})


@dataclass(frozen=True)
class Verdict:
    """The results of several checkers over one history; ``valid`` merges them."""

    results: tuple[Result, ...]
    options: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def valid(self) -> Validity:
        return merge_valid(r.valid for r in self.results)

    def invalid(self) -> list[Result]:
        """The results that are violated."""
        return [r for r in self.results if r.valid is False]

    def unknown(self) -> list[Result]:
        """The results that could not be decided."""
        return [r for r in self.results if r.valid is not True and r.valid is not False]

    def __getitem__(self, name: str) -> Result:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def names(self) -> list[str]:
        """Invariant names in the order they were checked."""
        return [r.name for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: merged validity, every result, the options used."""
        return {"valid": self.valid, "results": [r.to_dict() for r in self.results],
                "options": self.options}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> "Verdict":
        """Rebuild a verdict from its JSON form (extra keys are ignored)."""
        return cls(tuple(Result.from_dict(r) for r in raw.get("results", [])),
                   dict(raw.get("options") or {}))
