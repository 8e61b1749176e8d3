"""Budgets the app declares are the budgets it runs on: time limits, and reads of its reference table.

Neither of these shows in a job's outcome on a normal day. A time limit
nobody chose decides the long-tail batch, months later; a reference table
read once per document instead of once per process costs a table scan per
item. The evidence is read from the running system itself: the workers'
own answer about the limits they enforce (Celery remote control), and
Postgres's own count of table scans.
"""
import pytest

from harness import Run
from harness.budgets import audit_budgets
from harness.querystats import ScanCounter
from scenarios.refapp_client import RefApp

LONG_TAIL_CALL_S = 60  # real seconds per model call: 6 documents need 360 s, inside the 600 s budget
LONG_TAIL_DOCUMENTS = 6
BATCH_CALL_S = 20  # real seconds per model call: the waits take 1.6 s of the 6 s soft limit (scaled), leaving the rest for a loaded machine
BATCH_DOCUMENTS = 8
# A working cache reads the category table at most once per worker process, which for one batch
# is at most one read for all its documents; half a read per document is far above that and far
# below a read per document.
SCANS_PER_DOCUMENT = 0.5


@pytest.mark.catches("cli-budget-wins", invariant="effective_budget")
@pytest.mark.jobquake(checks=["effective_budget"])
def test_every_task_runs_on_the_budget_it_declares(jq: Run, refapp: RefApp) -> None:
    """Slow model calls only: the audit compares the declared budgets with what the workers enforce.

    Right: ``refapp.process_job`` declares 600 s soft / 900 s hard and the
    workers report the same (the worker command adds no limit of its own);
    a long-tail batch (6 documents at 60 s a call, 360 s in all) ends ``done``.
    Bug (``cli-budget-wins``): the task declares nothing in its decorator, so
    the worker's blanket ``--soft-time-limit`` (120 s) decides, and there is no
    hard limit at all; the long-tail batch fails ``timeout: timed out after 1
    of 6 documents`` at 120 s, a budget nobody chose.
    """
    audit_budgets(jq)

    jq.faults.paidapi_mode("slow", seconds=LONG_TAIL_CALL_S)  # the only job of this scenario
    job_id = refapp.submit([f"long contract, part {i}" for i in range(LONG_TAIL_DOCUMENTS)])

    job = refapp.wait_for(job_id, timeout=30)
    assert job["state"] == "done", f"the long-tail batch ended {job['state']}: {job['reason']}"


@pytest.mark.catches("reference-table-rescan", invariant="query_budget")
@pytest.mark.jobquake(checks=["query_budget"],
                      options={"query_budget": {"budget": {"categories": SCANS_PER_DOCUMENT}}})
def test_the_category_table_is_not_read_per_document(jq: Run, refapp: RefApp) -> None:
    """Slow model calls only: a batch of documents, with Postgres counting the scans of ``categories``.

    Every document's prompt lists the categories, and every answer is checked
    against them. Right: the table is read once per worker process and kept,
    so the batch costs at most one scan. Bug (``reference-table-rescan``):
    the table is read for every document, twice (prompt and check), so the
    scans grow with the batch. The model calls are slowed (20 s each) so the
    batch lasts a few seconds: Postgres publishes a busy backend's counts
    about once a second, and the count read afterwards is then most of them.
    """
    scans = ScanCounter(jq.database_dsn, "categories").start()
    jq.faults.paidapi_mode("slow", seconds=BATCH_CALL_S)  # the only job of this scenario

    job_id = refapp.submit([f"receipt {i}" for i in range(BATCH_DOCUMENTS)])

    job = refapp.wait_for(job_id, timeout=30)
    scans.record(jq.history, items=BATCH_DOCUMENTS, job_id=job_id)
    assert job["state"] == "done", f"the batch ended {job['state']}: {job['reason']}"
