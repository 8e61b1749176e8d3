"""Work per item: a batch costs each table of the app what the app says it costs, no table named.

A batch of 30 documents and an import of 40 CSV rows, each counted by the
database itself (``pg_stat_statements``, through ``harness.work.TableWork``):
every statement that read or wrote each table while the batch ran, the
background's polling (the sweeper, the relay, the dashboard catching up)
taken out. ``work_per_item`` divides each table's count by the items and
holds it to refapp's declared budget (``refapp.layered_limits.QUERIES_PER_ITEM``,
through config ``limits``), ``"*"`` for every table refapp does not name.

Bugs: ``import-category-query-per-row`` (each row's category looked up with
a query on the category table: one more statement per row on a table no
scenario names) and ``import-dedupe-scans-ledger`` (each row searched for in
the whole ledger before it is booked). Neither changes an outcome.
``reference-table-rescan`` (the category table re-read per document) shows
in the document batch the same way.
"""
from __future__ import annotations

import pytest

from harness import Run
from harness.work import TableWork
from scenarios.refapp_client import RefApp

ITEMS = 40  # rows of the import
DOCUMENTS = 30  # documents of the batch: well inside its 6 s soft limit on a busy machine, calls quick or not
MARGIN = 30.0  # seconds: 40 items at the test time scale take a few; a busy machine more
QUICK_CALL_S = 1.0  # real seconds per model call: 10 ms at the test time scale
CHECKS = ["work_per_item"]


@pytest.mark.catches("import-category-query-per-row", invariant="work_per_item")
@pytest.mark.catches("import-dedupe-scans-ledger", invariant="work_per_item")
@pytest.mark.jobquake(checks=CHECKS, expect_paid_calls=0)  # an import calls no model
def test_an_import_costs_each_table_what_the_app_declares_per_row(jq: Run, refapp: RefApp) -> None:
    rows = "\n".join(f"2026-01-{i % 28 + 1:02d},{i}.50,office supplies order {i}" for i in range(ITEMS))
    work = TableWork(jq.database_dsn).start()
    job_id = refapp.submit(None, project="p-work", file="ledger.csv", kind="import",
                           csv="date,amount,description\n" + rows)
    refapp.wait_for(job_id, timeout=MARGIN)
    work.record(jq.history, items=ITEMS, job_id=job_id)


@pytest.mark.catches("reference-table-rescan", invariant="work_per_item")
@pytest.mark.jobquake(checks=CHECKS)
def test_a_batch_of_documents_costs_each_table_what_the_app_declares_per_document(jq: Run, refapp: RefApp) -> None:
    # quick answers (a control): the documents stay well inside the batch's soft limit on a busy machine
    jq.paidapi.set_mode("slow", seconds=QUICK_CALL_S)
    documents = [f"receipt {i}: paid, thank you" for i in range(DOCUMENTS)]
    work = TableWork(jq.database_dsn).start()
    job_id = refapp.submit(documents, project="p-work", file="receipts.pdf")
    refapp.wait_for(job_id, timeout=MARGIN)
    work.record(jq.history, items=DOCUMENTS, job_id=job_id)
