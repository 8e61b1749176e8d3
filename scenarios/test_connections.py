"""A job that breaks off in the middle gives back every connection it took, and ends every transaction.

Error paths are where connections leak: the ``close()`` an exception jumps
over, the early ``return`` that forgets the transaction it opened. A leaked
connection stays checked out of its process's pool until the garbage
collector finds it, or for ever, and an open transaction keeps its row
locks, which the next claim, the sweeper or a migration then waits on.

Two ordinary ways a job stops halfway, each ending in a state a person can
see, after which nothing may be held:

* the user cancels a running job: its attempt learns it at its next write,
  inside that write's transaction, and stops;
* a CSV row that breaks the database write (an amount too large for its
  column): the insert fails inside its transaction, the row is that row's
  failure and the import goes on.

``connections_returned`` reads, once the run has settled, each app
process's pool check-outs (still out, or given back only by the garbage
collector) and ``pg_stat_activity`` (app sessions idle in a transaction).
The mutants of this class (``row-transaction-leaks-on-error``,
``duplicate-claim-leaks-connection``) leak on other error paths: a sweep
row that raises, a refused duplicate claim; the sweep and outbox scenarios
take those paths, and the same invariant judges them there.
"""
from __future__ import annotations

import pytest

from harness import Run
from refapp.submit import job_id_for
from scenarios.refapp_client import RefApp

MARGIN = 10.0  # seconds a wait may take on a busy machine
CHECKS = ["connections_returned"]


@pytest.mark.jobquake(checks=CHECKS)
def test_a_job_cancelled_mid_batch_returns_every_connection(jq: Run, refapp: RefApp) -> None:
    """The user cancels a three-document job while its second document's call is in flight."""
    job_id = job_id_for("p-cancel", "scan.pdf")
    held = jq.paidapi.gate(job_id=job_id, step="doc-1.categorise")
    documents = ["invoice 7, payable in 30 days", "receipt, paid, thank you", "a letter, kind regards"]
    assert refapp.submit(documents, project="p-cancel", file="scan.pdf") == job_id
    held.wait(timeout=MARGIN)

    assert refapp.cancel(job_id) == "running"  # a running job stops at its next check
    held.heal()
    job = refapp.wait_for(job_id, timeout=MARGIN)
    assert (job["state"], job["reason"]) == ("failed", "cancelled by user after 1 of 3 documents"), job


@pytest.mark.jobquake(checks=CHECKS, expect_paid_calls=0)
def test_an_import_row_that_breaks_its_database_write_returns_every_connection(jq: Run, refapp: RefApp) -> None:
    """One of three CSV rows has an amount its column cannot hold: the insert fails, the import goes on."""
    csv = ("date,amount,description\n2026-01-02,12.50,taxi\n"
           "2026-01-03,1000000000000.00,a typo of a thousand billion\n2026-01-04,3.20,coffee\n")
    job_id = refapp.submit(kind="import", csv=csv, project="p-import-overflow", file="bank.csv")
    job = refapp.wait_for(job_id, timeout=MARGIN)
    assert (job["state"], job["items_done"], job["items_failed"]) == ("failed", 2, 1), job
