"""Faults in the database: every connection slot taken, and a row the app cannot process.

``HoldDatabaseConnections`` is the black-box half of pool exhaustion (the
white-box half is ``ExhaustPool`` at a failpoint): it opens raw connections
to Postgres until the server answers "too many clients" and holds them, so
every new connection anyone makes is refused with ``OperationalError``
(SQLSTATE 53300). It connects as the superuser, so it takes the
``superuser_reserved_connections`` slots too (the app here connects as the
superuser as well; a non-superuser app is locked out once only those remain,
with "remaining connection slots are reserved", which also stops the
filling). Connections the app already holds in its pool keep working.
"""
from __future__ import annotations

from typing import Any, Callable

import psycopg
from psycopg import sql

from harness.faults import _params as p
from harness.faults._app_logs import AppLogWatch
from harness.faults.base import Fault

__all__ = ["CHECKOUT_ERRORS", "HoldDatabaseConnections", "PoisonRow", "SPARE", "TOO_MANY_CONNECTIONS"]

TOO_MANY_CONNECTIONS = "53300"  # SQLSTATE of both "too many clients" and "slots are reserved"
SPARE = 5  # connections tried beyond max_connections before giving up
# what the app logs when it cannot get a connection (the evidence that the exhaustion reached it)
CHECKOUT_ERRORS = r"too many clients|remaining connection slots|QueuePool limit|connection slots are reserved"


def _one(conn: psycopg.Connection, query: str) -> Any:
    """The single value ``query`` answers (a ``SHOW``)."""
    row = conn.execute(query).fetchone()
    if row is None:
        raise RuntimeError(f"{query!r} answered no row")
    return row[0]


class HoldDatabaseConnections(Fault):
    """Take every Postgres connection slot; heal closes them."""

    name = "hold_database_connections"

    def __init__(self) -> None:
        super().__init__()
        self._held: list[psycopg.Connection] = []

    def _connect(self) -> psycopg.Connection:
        return self.run.stack.postgres.connect("postgres")

    def _inject(self) -> dict[str, Any]:
        self._watch = AppLogWatch(self.run)
        first = self._connect()
        self._held = [first]
        limit = int(_one(first, "SHOW max_connections"))
        reserved = int(_one(first, "SHOW superuser_reserved_connections"))
        refusal = None
        try:
            while len(self._held) < limit + SPARE:
                try:
                    self._held.append(self._connect())
                except psycopg.OperationalError as exc:
                    if exc.sqlstate != TOO_MANY_CONNECTIONS and "too many clients" not in str(exc):
                        raise
                    refusal = str(exc).strip()
                    break
            if refusal is None:
                raise self.error(f"Postgres still accepted connections after {len(self._held)}")
            self._verify()
        except BaseException:
            self._close()
            raise
        return {"held": len(self._held), "max_connections": limit,
                "superuser_reserved_connections": reserved, "refusal": refusal}

    def _verify(self) -> None:
        """A new connection to the app database, as the app would make, must be refused."""
        try:
            psycopg.connect(self.run.database_dsn, connect_timeout=2).close()
        except psycopg.OperationalError as exc:
            if exc.sqlstate == TOO_MANY_CONNECTIONS or "too many clients" in str(exc):
                return
            raise
        raise self.error("a new connection to the app database still succeeds: exhaustion did not take effect")

    def _heal(self) -> dict[str, Any]:
        felt = self._watch.evidence(CHECKOUT_ERRORS) if getattr(self, "_watch", None) else {}
        closed = self._close()
        return {"closed": closed, **felt}

    def _close(self) -> int:
        held, self._held = self._held, []
        for conn in held:
            try:
                conn.close()
            except psycopg.Error:
                pass  # the server may have gone (a restart): nothing left to close
        return len(held)


class PoisonRow(Fault):
    """Insert a row whose per-row processing raises; heal deletes it if it is still there.

    Either ``values`` (column -> value, inserted into ``table``) or ``insert``,
    a callable given a psycopg connection that inserts the row itself and
    returns the column values that identify it. ``key`` names the columns
    that identify a ``values`` row (default: all of them).
    """

    name = "poison_row"

    def __init__(self, table: str, values: dict[str, Any] | None = None,
                 insert: Callable[[psycopg.Connection], dict[str, Any]] | str | None = None,
                 key: list[str] | None = None):
        super().__init__()
        self.table = p.text(table, "table", self.name)
        if (values is None) == (insert is None):
            raise self.error("give either values={column: value} or insert=callable")
        self.values = p.string_dict(values, "values", self.name)
        if self.values == {}:
            raise self.error("values must name at least one column")
        self.insert = None if insert is None else p.a_callable(insert, "insert", self.name)
        if key is not None and (not isinstance(key, list) or not key
                                or (self.values is not None and not set(key) <= set(self.values))):
            raise self.error(f"key must be a non-empty list of columns among the values, got {key!r}")
        self.key = key
        self.identity: dict[str, Any] | None = None  # the columns that find the row again

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"table": self.table}
        if self.values is not None:
            params["values"] = self.values
        else:
            assert self.insert is not None  # one of values / insert, checked in __init__
            params["insert"] = p.describe_callable(self.insert)
        if self.key is not None:
            params["key"] = self.key
        return params

    def _table(self) -> sql.Composable:
        return sql.Identifier(*self.table.split("."))

    def _inject(self) -> dict[str, Any]:
        with psycopg.connect(self.run.database_dsn, autocommit=True, connect_timeout=5) as conn:
            if self.values is not None:
                columns = list(self.values)
                conn.execute(sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
                    self._table(), sql.SQL(", ").join(map(sql.Identifier, columns)),
                    sql.SQL(", ").join(sql.Placeholder() * len(columns))), list(self.values.values()))
                self.identity = {c: self.values[c] for c in (self.key or columns)}
            else:
                assert self.insert is not None
                identity = self.insert(conn)
                if not isinstance(identity, dict) or not identity:
                    raise self.error(f"insert must return the column values that identify the row, "
                                     f"got {identity!r}")
                self.identity = dict(identity)
            inserted = self._read_back(conn)
        # the row as stored (its id too): the evidence a sweep reached it is read against this
        landed_by: dict[str, Any] = {"row": self.identity, "inserted": inserted}
        job_id = self._job_id(inserted)
        if job_id is not None:  # a job row: the state log shows whether the app ever touched it
            landed_by["job_id"] = job_id
        return landed_by

    def _job_id(self, inserted: dict[str, Any] | None) -> str | None:
        """The poison row's job id when it is a row of the app's job table, else None."""
        config = self.run.config
        if not inserted or self.table != config.job_table:
            return None
        value = inserted.get(config.job_id_column)
        return None if value is None else str(value)

    def _where(self) -> tuple[sql.Composable, list[Any]]:
        assert self.identity
        where = sql.SQL(" AND ").join(sql.SQL("{} IS NOT DISTINCT FROM %s").format(sql.Identifier(c))
                                      for c in self.identity)
        return where, list(self.identity.values())

    def _read_back(self, conn: psycopg.Connection) -> dict[str, Any] | None:
        where, values = self._where()
        cursor = conn.execute(sql.SQL("SELECT * FROM {} WHERE {} LIMIT 1").format(self._table(), where), values)
        row = cursor.fetchone()
        if row is None or cursor.description is None:
            return None
        plain = (str, int, float, bool, type(None))
        return {col.name: val if isinstance(val, plain) else str(val) for col, val in zip(cursor.description, row)}

    def _heal(self) -> dict[str, Any]:
        if not self.identity:
            return {"deleted": 0}
        where, values = self._where()
        with psycopg.connect(self.run.database_dsn, autocommit=True, connect_timeout=5) as conn:
            deleted = conn.execute(sql.SQL("DELETE FROM {} WHERE {}").format(self._table(), where),
                                   values).rowcount
        self.identity = None
        return {"deleted": deleted}
