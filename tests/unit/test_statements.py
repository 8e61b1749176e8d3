"""Which tables a statement reads or writes, as pg_stat_statements shows it (``harness.evidence.statements``)."""
from __future__ import annotations

import pytest

from harness.evidence.statements import tables_of

TABLES = {"jobs", "items", "outbox", "categories", "ledger_entries"}


@pytest.mark.parametrize(("query", "tables"), [
    ("SELECT jobs.state FROM jobs WHERE jobs.id = $1 FOR SHARE", {"jobs"}),
    ("UPDATE jobs SET items_done=(SELECT count(*) FROM items WHERE items.job_id = jobs.id) WHERE jobs.id = $1",
     {"jobs", "items"}),
    ("INSERT INTO ledger_entries (job_id, row_no) VALUES ($1, $2) ON CONFLICT DO NOTHING", {"ledger_entries"}),
    ('SELECT i.idx FROM "items" AS i JOIN public.jobs j ON j.id = i.job_id', {"items", "jobs"}),
    ("SELECT a FROM jobs, outbox o WHERE o.job_id = jobs.id", {"jobs", "outbox"}),
    ("DELETE FROM outbox USING jobs WHERE outbox.job_id = jobs.id", {"outbox", "jobs"}),
    ("SELECT extract(epoch FROM now())", set()),  # FROM inside a function call: no table
    ("SELECT name FROM pg_stat_user_tables", set()),  # not one of the app's tables
])
def test_the_tables_a_statement_names(query, tables):
    assert tables_of(query, TABLES) == tables
