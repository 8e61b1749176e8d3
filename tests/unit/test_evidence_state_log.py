"""The state-log trigger's generated SQL (its capture in a real Postgres: tests/integration)."""
from __future__ import annotations

import pytest

from harness import ConfigError
from harness.evidence import StateLogConfig, install_sql


def test_identifiers_are_quoted():
    sql = install_sql(StateLogConfig(table="Jobs", id_column="job_id", state_column="status",
                                     reason_column="error", attempt_column="tries", schema="app"))
    assert 'ON "app"."Jobs"' in sql
    assert 'NEW."status"::text' in sql and 'NEW."error"::text' in sql and 'NEW."tries"::integer' in sql
    assert "clock_timestamp()" in sql and "txid_current()" in sql


def test_missing_columns_log_null():
    sql = install_sql(StateLogConfig())
    assert "VALUES (NEW.\"id\"::text, NEW.\"state\"::text, NULL, NULL, TG_OP, " in sql


@pytest.mark.parametrize("bad", ['jobs"; DROP TABLE x; --', "a b", "1jobs", "x$y$", ""])
def test_unsafe_identifiers_are_refused(bad):
    with pytest.raises(ConfigError, match="plain SQL identifier"):
        StateLogConfig(table=bad)
