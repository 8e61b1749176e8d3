"""The pool watch: what an app process holds checked out, and what only the garbage collector gave back.

A real SQLAlchemy pool (SQLite in a file, a queue pool like an app's), the
instrumentation's ``PoolWatch`` on it, and the harness's readers of its file.
"""
from __future__ import annotations

import gc
import os

import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import Pool, QueuePool

from harness.evidence.connections import checkouts_out, outlasting, pools_used, process_started
from harness.instrument._pools import PoolWatch
from harness import wait_until
from harness.instrument.control import InstrumentControl


@pytest.fixture
def watched(tmp_path):
    """(the run's instrumentation folder, an engine whose checkouts the watch follows)."""
    control = InstrumentControl.create(tmp_path / "instrument")
    watch = PoolWatch(str(control.path))
    watch.install(sa)
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'app.db'}", poolclass=QueuePool, pool_size=2)
    yield control, engine
    engine.dispose()
    for name, fn in (("checkout", watch.checkout), ("checkin", watch.checkin), ("detach", watch.detach)):
        event.remove(Pool, name, fn)


def mine(control: InstrumentControl) -> dict:
    return next(p for p in control.pools() if p["pid"] == os.getpid())


def test_a_checkout_is_out_until_the_code_closes_it_and_names_the_apps_line(watched):
    control, engine = watched
    conn = engine.connect()
    (held,) = mine(control)["out"]
    assert held["site"].endswith("test_a_checkout_is_out_until_the_code_closes_it_and_names_the_apps_line")
    assert "test_instrument_pools.py:" in held["site"]
    conn.close()
    assert mine(control)["out"] == [] and mine(control)["checkouts"] == 1
    assert control.records() == []  # closed by the code: no event


def test_a_connection_the_code_forgot_is_reported_when_the_garbage_collector_returns_it(watched):
    control, engine = watched

    def forgets() -> None:
        conn = engine.connect()
        conn.exec_driver_sql("SELECT 1")  # and never closes it

    forgets()
    gc.collect()
    (collected,) = [r for r in control.records() if r["name"] == "connection_collected"]
    assert "forgets" in collected["data"]["site"]
    assert mine(control)["out"] == []


def test_the_harness_judges_only_this_tests_checkouts_of_live_processes(watched):
    control, engine = watched
    before = engine.connect()
    since = mine(control)["last"] + 1e-6
    during = engine.connect()
    out = checkouts_out(control.pools(), since)
    assert [h.since for h in out] == [mine(control)["last"]]  # not the one taken before the test
    assert checkouts_out(control.pools(), since, alive=lambda pid, started: False) == []  # gone: it took its own
    assert mine(control)["started"] == process_started()  # a later process given this pid is not this one
    assert pools_used(control.pools(), since) == {f"? ({os.getpid()})": 2}  # no process name outside a stack
    during.close()
    before.close()


def reads(*answers: list[int]):
    """A reader that gives these answers in turn, then the last one for ever."""
    left = list(answers)
    return lambda: left.pop(0) if len(left) > 1 else left[0]


def test_outlasting_keeps_only_what_is_still_there_at_the_end_and_returns_at_once_when_nothing_is():
    assert outlasting(reads([1, 2], [2, 3]), key=lambda x: x, grace=0.2, poll=0.01) == [2]  # 3 came later
    assert outlasting(reads([]), key=lambda x: x, grace=60.0) == []
    assert outlasting(reads([1], []), key=lambda x: x, grace=60.0, poll=0.0) == []


def test_a_zombie_or_a_process_whose_pid_was_given_to_another_is_not_alive(tmp_path):
    import subprocess
    import sys

    from harness.evidence.connections import _alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = process_started(child.pid)
    wait_until(lambda: process_started(child.pid) is None, timeout=10, what="the child to exit (a zombie until reaped)")
    assert not _alive(child.pid, started)  # exited, not yet reaped: a zombie
    child.wait()
    assert not _alive(os.getpid(), 1) and _alive(os.getpid(), process_started())
