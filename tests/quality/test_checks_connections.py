"""connections_returned: a connection left checked out, given back by the GC, or idle in a transaction is found."""
from __future__ import annotations

from harness.checks import CHECKERS, UNKNOWN, run_checks
from harness.checks.connections import POOL_SOURCE, SESSION_SOURCE, connections_returned
from harness.checks.generic import applicable
from harness.checks.runner import checker_name
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder


def read(b: HistoryBuilder, pools: int | None = 2, sessions: int | None = 3) -> HistoryBuilder:
    """The harness read the pool files (``pools`` app processes used one) and pg_stat_activity."""
    if pools is not None:
        b.event(v.HARNESS, "ok", v.READ, 5.0, source=POOL_SOURCE, records=pools)
    if sessions is not None:
        b.event(v.HARNESS, "ok", v.READ, 5.1, source=SESSION_SOURCE, records=sessions)
    return b


def judge(b: HistoryBuilder):
    return run_checks([connections_returned], b.history(), b.snapshot())["connections_returned"]


def test_read_with_nothing_held_is_valid():
    result = judge(read(HistoryBuilder()))
    assert result.valid is True
    assert result.details == {"pools_used": 2, "sessions_seen": 3}


def test_a_checkout_still_out_at_the_verdict_names_the_process_and_the_apps_line():
    b = read(HistoryBuilder())
    b.event(v.CONNECTION, "fail", v.HELD, 5.2, pid=81, process="worker1", since=1005.5,
            site="refapp/sweep.py:100 _row_transaction", backend_pid=9031)
    result = judge(b)
    assert result.valid is False
    assert result.counterexample == [{"kind": "still checked out", "process": "worker1", "pid": 81,
                                      "site": "refapp/sweep.py:100 _row_transaction", "since": 0.5,
                                      "backend_pid": 9031}]
    assert result.message == ("1 connection(s) not given back; first: a connection of worker1 (pid 81) taken at "
                              "refapp/sweep.py:100 _row_transaction: still checked out")


def test_a_connection_the_garbage_collector_gave_back_is_a_violation_however_soon():
    b = read(HistoryBuilder())
    b.event(v.INSTRUMENT, "ok", v.COLLECTED, 2.0, pid=7, process="worker2", site="refapp/jobstore.py:78 claim",
            since=1001.9, held_s=0.0001)
    result = judge(b)
    assert result.valid is False
    assert result.counterexample[0]["kind"] == "returned by the garbage collector"
    assert result.counterexample[0]["site"] == "refapp/jobstore.py:78 claim"


def test_a_session_idle_in_a_transaction_shows_its_locks():
    b = read(HistoryBuilder())
    b.event(v.CONNECTION, "fail", v.IDLE_IN_TRANSACTION, 5.3, backend_pid=4242, application="jobquake:worker1",
            state="idle in transaction", idle_s=3.25, transaction_s=3.3, locks=["invoices", "transactionid"],
            query="SELECT invoices.id FROM invoices FOR UPDATE")
    result = judge(b)
    assert result.valid is False
    assert "session 4242 of jobquake:worker1 idle in an open transaction for 3.2s, holding invoices, " \
           "transactionid" in result.message


def test_without_either_read_or_with_nothing_used_it_is_unknown():
    assert judge(HistoryBuilder()).valid == UNKNOWN
    nothing = judge(read(HistoryBuilder(), pools=0, sessions=0))
    assert nothing.valid == UNKNOWN and "nothing to judge" in nothing.message
    half = judge(read(HistoryBuilder(), sessions=None))
    assert half.valid == UNKNOWN and "the other half of the evidence is missing" in half.message


def test_it_is_switched_on_by_its_evidence_and_shipped_by_name():
    assert CHECKERS["connections_returned"] is connections_returned
    assert "connections_returned" not in [checker_name(c) for c in applicable(HistoryBuilder().history(), None)]
    b = read(HistoryBuilder())
    assert "connections_returned" in [checker_name(c) for c in applicable(b.history(), b.snapshot())]
