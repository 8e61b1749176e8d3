"""The rows an app's sweep must handle, by the sweep's own predicate, read from the app's database.

An app's sweep records what each run did (which rows it listed, processed,
failed); its predicate says which rows it should list. Config
``sweep_predicate`` is that predicate as SQL returning one column, the ids
(e.g. ``SELECT id FROM invoices WHERE status = 'open' AND due_on <
current_date``). Read after the app settled, the rows it returns are the
rows no run has handled yet::

    rows = predicate_rows(dsn, config.sweep_predicate)   # ids, as text
"""
from __future__ import annotations

import psycopg

from harness.errors import ConfigError


def predicate_rows(dsn: str, query: str) -> list[str]:
    """The ids ``query`` selects now (as text, in its order), read in an autocommit statement of their own."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(query).fetchall()
    except psycopg.Error as exc:
        raise ConfigError(f"sweep_predicate failed: {exc}; it must be a query returning the ids of the rows "
                          f"the sweep must handle", key="sweep_predicate") from exc
    return [str(row[0]) for row in rows]
