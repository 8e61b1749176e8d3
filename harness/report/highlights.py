"""What a verdict points at, so the timeline can highlight it."""
from __future__ import annotations

from harness.checks.billing import NAME as BILLING
from harness.checks.result import Verdict


def flagged_jobs(verdict: Verdict | None) -> set[str]:
    """Jobs named by any non-valid result, in its counterexample or its violations."""
    flagged: set[str] = set()
    for result in verdict.results if verdict else ():
        if result.valid is True:
            continue
        items = list(result.counterexample) + list(result.details.get("violations", []))
        for item in items:
            if isinstance(item, dict) and item.get("job_id") is not None:
                flagged.add(str(item["job_id"]))
    return flagged


def duplicate_calls(verdict: Verdict | None) -> set[str]:
    """Call ids that took part in a duplicate billing (invalid or ambiguous)."""
    dups: set[str] = set()
    for result in verdict.results if verdict else ():
        if result.name != BILLING:
            continue
        for pair in [*result.details.get("violations", []), *result.details.get("ambiguous", [])]:
            dups.update(str(c["call_id"]) for c in pair.get("calls", []))
    return dups
