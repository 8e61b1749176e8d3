"""Record the app's sweep predicate after a scenario: the rows its sweep must handle and has not.

Read with the app's own predicate (config ``sweep_predicate``) once the
scenario's work is done, as a ``sweep ok predicate`` event; the
``sweeps_cover_predicate`` invariant compares it with what each sweep run
listed. Nothing is recorded when config names no predicate or no sweep run
was recorded (the scenario ran no sweep).
"""
from __future__ import annotations

from typing import Any

from harness.evidence.sweep_rows import predicate_rows
from harness.history import vocabulary as v


def record_sweep_predicate(run: Any) -> list[str] | None:
    """Record the predicate's rows now; the rows, or None when there is nothing to compare them with."""
    query = run.config.sweep_predicate
    if not query or not run.history.events().by_source(v.SWEEP, name=v.SWEEP):
        return None
    rows = predicate_rows(run.database_dsn, query)
    run.history.record(v.SWEEP, "ok", v.PREDICATE, data={"rows": rows, "query": query})
    return rows
