"""ExhaustPool, HoldDatabaseConnections, PoisonRow and DatabaseRestart against real Postgres."""
from __future__ import annotations

import threading
import time

import psycopg
import pytest
from celery import Celery

from harness._wait import wait_until
from harness.checks import UNKNOWN
from harness.checks.landed import faults_landed
from tests.common.tiny import job_state, submit

pytestmark = pytest.mark.integration


def completes(run, job_id: str) -> None:
    submit(run, job_id)
    wait_until(lambda: job_state(run, job_id) == "done", timeout=20, what=f"{job_id} done")


def query(run, sql: str, *args):
    with psycopg.connect(run.database_dsn, autocommit=True) as conn:
        return conn.execute(sql, args).fetchall()


def test_exhausted_pool_makes_the_apps_next_checkout_time_out(tiny):
    worker_log = tiny.workers[0].log_offset()
    pool = tiny.faults.exhaust_pool(at="tiny.after_processing", match={"job_id": "e1"})
    submit(tiny, "e1")
    pool.wait(10)
    wait_until(lambda: "QueuePool limit of size 2" in tiny.workers[0].logs_since(worker_log),
               timeout=15, what="the app's checkout to time out")
    assert job_state(tiny, "e1") == "processing"  # "done" could not be written
    pool.heal()
    completes(tiny, "after-exhaust")


def test_held_connections_make_postgres_refuse_new_clients(tiny):
    hold = tiny.faults.hold_database_connections()
    with pytest.raises(psycopg.OperationalError, match="too many clients"):
        psycopg.connect(tiny.database_dsn, connect_timeout=2)
    ok = next(e for e in tiny.history.events() if e.source == "fault" and e.type == "ok")
    assert ok.data["held"] > 1 and ok.data["max_connections"] == tiny.config.postgres_max_connections
    hold.heal()
    assert query(tiny, "SELECT 1") == [(1,)]
    completes(tiny, "after-hold")


def sweep(run, sweep_id: str) -> tuple:
    Celery(broker=run.redis_url).send_task("tiny.sweep", args=[sweep_id])

    def finished():
        rows = query(run, "SELECT state, processed, reason FROM sweeps WHERE id = %s", sweep_id)
        return rows[0] if rows and rows[0][0] != "running" else None

    return wait_until(finished, timeout=20, what=f"sweep {sweep_id} to finish")


def test_poison_row_breaks_the_sweep_and_heal_deletes_it(tiny):
    query_rows = "SELECT id FROM items ORDER BY id"
    with psycopg.connect(tiny.database_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO items (id, value) VALUES (1, '1'), (3, '3')")
    poison = tiny.faults.poison_row("items", {"id": 2, "value": "poison"}, key=["id"])
    assert query(tiny, query_rows) == [(1,), (2,), (3,)]
    state, _, reason = sweep(tiny, "s1")
    assert state == "failed" and "poison" in reason
    poison.heal()
    assert query(tiny, query_rows) == [(1,), (3,)]
    assert sweep(tiny, "s2")[:2] == ("done", 2)


def test_poison_row_by_callable_heals_even_when_the_row_is_gone(tiny):
    def insert(conn) -> dict:
        conn.execute("INSERT INTO items (id, value) VALUES (7, 'x')")
        return {"id": 7}

    poison = tiny.faults.poison_row("items", insert=insert)
    query(tiny, "DELETE FROM items WHERE id = 7 RETURNING id")  # the app cleaned it up itself
    poison.heal()
    heal_ok = [e for e in tiny.history.events() if e.name == "heal" and e.type == "ok"]
    assert heal_ok[-1].data["deleted"] == 0


def test_database_restart_cuts_sessions_keeps_data_and_pools_reconnect(tiny):
    completes(tiny, "before-restart")
    conn = psycopg.connect(tiny.database_dsn, autocommit=True)
    old_pid = tiny.stack.postgres.pid
    restart = tiny.faults.database_restart()
    assert tiny.stack.postgres.pid != old_pid
    with pytest.raises(psycopg.OperationalError):
        conn.execute("SELECT 1")
    conn.close()
    completes(tiny, "during-restart")  # the worker's pre-pinging pool reconnected, and logged it
    restart.heal()
    assert job_state(tiny, "before-restart") == "done"  # the data survived
    healed = [e for e in tiny.history.events() if e.name == "heal" and e.type == "ok"][-1]
    assert healed.data["app_errors"] >= 1, healed.data  # the app saw the database go: the fault landed
    landing = faults_landed(tiny.history.events(), None)
    assert landing.valid is True and "database_restart: the app saw the database go" in landing.message


def test_a_database_restart_the_app_never_noticed_did_not_land(tiny):
    tiny.faults.database_restart().heal()  # no job touched the database in between
    landing = faults_landed(tiny.history.events(), None)
    assert landing.valid == UNKNOWN and "no app process logged a lost connection" in landing.message


def test_a_database_kept_down_refuses_every_connection_until_it_is_back(tiny):
    """down_for: the window is certain, not left to timing; the data and the app come back after it."""
    completes(tiny, "before-outage")
    done: list = []
    restart = threading.Thread(target=lambda: done.append(tiny.faults.database_restart(down_for=1.0)))
    started = time.monotonic()
    restart.start()

    def refused() -> bool:
        try:
            psycopg.connect(tiny.database_dsn, connect_timeout=1).close()
        except psycopg.OperationalError:
            return True
        return False

    assert wait_until(refused, timeout=5, what="a refused connection")
    restart.join(timeout=30)
    assert done and time.monotonic() - started >= 1.0
    assert done[0].spec() == {"fault": "database_restart", "down_for": 1.0}
    completes(tiny, "after-outage")
    assert job_state(tiny, "before-outage") == "done"  # the data survived the outage
