"""The statements the app ran, as the database counted them (``pg_stat_statements``), and the tables each reads.

The harness's Postgres loads ``pg_stat_statements`` (``shared_preload_libraries``)
and the extension is created in the template database, so every test's
fresh database has it. The server counts each statement when it ends, so a
count read right after a batch is the whole batch's (table statistics, by
contrast, reach ``pg_stat_user_tables`` up to a second or more late). A
statement's text names its tables; ``tables_of`` reads them the way an SQL
reader would for the statements an ORM writes (after ``FROM``, ``JOIN``,
``UPDATE``, ``INTO``, ``USING``, and each item of a ``FROM`` list)::

    install_statement_stats(template_dsn)             # once, in the template database
    before = read_statements(dsn)                     # {queryid: Statement}
    ...
    after = read_statements(dsn)
    tables_of(after[qid].query, {"jobs", "items"})    # the tables one statement reads or writes
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import psycopg

from harness.errors import HarnessError

_INSTALL = "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
_TABLES = "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema()"
_READ = ("SELECT queryid, calls, query FROM pg_stat_statements "
         "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel")
# a table reference: after one of these words, an optionally schema-qualified, optionally quoted name and its
# alias (a word that is not the next clause's), then more of them after commas
_NOT_ALIAS = r"(?!(?:USING|WHERE|JOIN|ON|SET|LEFT|RIGHT|INNER|FULL|CROSS|NATURAL|GROUP|ORDER|LIMIT|OFFSET|FOR|VALUES|" \
             r"RETURNING|UNION|HAVING|WINDOW|DEFAULT|SELECT)\b)"
_TABLE = rf'(?:"?\w+"?\.)?"?\w+"?(?:\s+(?:AS\s+)?{_NOT_ALIAS}\w+)?'
_REFERENCE = re.compile(rf"\b(?:FROM|JOIN|UPDATE|INTO|USING)\s+({_TABLE}(?:\s*,\s*{_TABLE})*)", re.IGNORECASE)


class StatementStatsError(HarnessError):
    """The database does not count statements (``pg_stat_statements`` not loaded or not installed)."""


@dataclass(frozen=True)
class Statement:
    """One normalised statement and how many times it ran."""

    queryid: int
    calls: int
    query: str


def install_statement_stats(dsn: str) -> None:
    """Create the extension in the database at ``dsn`` (a template: its copies have it too)."""
    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
        conn.execute(_INSTALL)


def read_statements(dsn: str) -> dict[int, Statement]:
    """Every top-level statement run in this database so far, by query id (read in autocommit)."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(_READ).fetchall()
    except psycopg.Error as exc:
        raise StatementStatsError(f"cannot read pg_stat_statements: {exc}; the server must load it "
                                  f"(shared_preload_libraries) and the database have the extension") from exc
    return {int(qid): Statement(int(qid), int(calls), str(query)) for qid, calls, query in rows if qid is not None}


def user_tables(dsn: str) -> set[str]:
    """The names of this database's tables (in the current schema)."""
    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
        return {str(row[0]) for row in conn.execute(_TABLES).fetchall()}


def tables_of(query: str, tables: set[str]) -> set[str]:
    """The tables among ``tables`` that ``query`` reads or writes."""
    found = set()
    for match in _REFERENCE.finditer(query):
        for item in match.group(1).split(","):
            name = item.strip().split()[0].split(".")[-1].strip('"')
            if name in tables:
                found.add(name)
    return found
