"""The rows an app's sweep must handle, by the sweep's own predicate, read from the app's database.

An app's sweep records what each run did (which rows it listed, processed,
failed); its predicate says which rows it should list. Config
``sweep_predicate`` is that predicate as SQL returning the ids, and
optionally a second column: when each row last changed (a timestamp or
epoch seconds; ``pg_xact_commit_timestamp(xmin)`` where the server tracks
commit times, as the harness's does). Read after the app settled, the rows
it returns are the rows no run has handled yet, and a row unchanged since
before a run started matched the predicate when that run started::

    rows = predicate_rows(dsn, config.sweep_predicate)   # [(id as text, changed_at or None)]
"""
from __future__ import annotations

import psycopg

from harness.errors import ConfigError


def predicate_rows(dsn: str, query: str) -> list[tuple[str, float | None]]:
    """The ids ``query`` selects now (as text, in its order) with when each last changed (epoch seconds, None
    when the query does not say), read in an autocommit statement of their own."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(query).fetchall()
    except psycopg.Error as exc:
        raise ConfigError(f"sweep_predicate failed: {exc}; it must be a query returning the ids of the rows "
                          f"the sweep must handle", key="sweep_predicate") from exc
    return [(str(row[0]), _epoch(row[1]) if len(row) > 1 else None) for row in rows]


def _epoch(value: object) -> float | None:
    if value is None:
        return None
    return value.timestamp() if hasattr(value, "timestamp") else float(value)
