"""The state-log trigger capturing every change in a real Postgres (its generated SQL: tests/unit)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
import sqlalchemy

from harness import wait_until
from harness._ports import free_port, release_port
from harness.evidence import StateLogConfig, install_sql, last_log_id, read_heartbeats, read_state_log, uninstall_sql
from harness.evidence.events import events_from_state_log

pytestmark = pytest.mark.integration

PG_BIN = Path("/usr/lib/postgresql/15/bin")
RUN_AS = "postgres" if os.geteuid() == 0 else None  # postgres refuses to run as root


@pytest.fixture(scope="module")
def postgres():
    """A throwaway cluster on a free loopback port, stopped at the end of the module."""
    workdir = Path(tempfile.mkdtemp(prefix="jq-statelog-"))
    datadir = workdir / "data"
    if RUN_AS:
        shutil.chown(workdir, RUN_AS)
    port = free_port()
    subprocess.run([PG_BIN / "initdb", "-D", datadir, "-U", "postgres", "--auth=trust", "--no-sync",
                    "-E", "UTF8", "--locale=C"], user=RUN_AS, check=True, capture_output=True)
    options = f"-h 127.0.0.1 -p {port} -c fsync=off -c unix_socket_directories='' -c track_commit_timestamp=on"
    subprocess.run([PG_BIN / "pg_ctl", "-D", datadir, "-o", options, "-l", workdir / "pg.log", "-w", "start"],
                   user=RUN_AS, check=True, capture_output=True)
    try:
        dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        wait_until(lambda: psycopg.connect(dsn, connect_timeout=1).close() or True, timeout=20,
                   what=f"postgres on 127.0.0.1:{port}")
        yield dsn
    finally:
        subprocess.run([PG_BIN / "pg_ctl", "-D", datadir, "-m", "fast", "-w", "stop"],
                       user=RUN_AS, check=False, capture_output=True)
        release_port(port)
        shutil.rmtree(workdir, ignore_errors=True)


CONFIG = StateLogConfig(table="jobs", id_column="id", state_column="state",
                        reason_column="error", attempt_column="attempt")


@pytest.fixture
def conn(postgres):
    with psycopg.connect(postgres, autocommit=True) as connection:
        connection.execute(uninstall_sql(CONFIG))
        connection.execute("DROP TABLE IF EXISTS jobs")
        connection.execute("CREATE TABLE jobs (id serial PRIMARY KEY, state text NOT NULL, error text, "
                           "attempt integer, heartbeat_at timestamptz)")
        connection.execute(install_sql(CONFIG))
        yield connection


def test_a_state_shorter_than_a_millisecond_is_captured(conn):
    for job in range(1, 6):
        conn.execute("INSERT INTO jobs (state, attempt) VALUES ('queued', 1)")
        # one round trip, two transactions: 'running' lives only between the two commits
        conn.execute(f"BEGIN; UPDATE jobs SET state = 'running' WHERE id = {job}; COMMIT;"
                     f" BEGIN; UPDATE jobs SET state = 'done' WHERE id = {job}; COMMIT;")
    assert conn.execute("SELECT DISTINCT state FROM jobs").fetchall() == [("done",)]
    changes = read_state_log(conn, 0, CONFIG)
    lasted = []
    for job in map(str, range(1, 6)):
        mine = [c for c in changes if c.job_id == job]
        assert [c.state for c in mine] == ["queued", "running", "done"]
        assert len({c.txid for c in mine}) == 3, "three separate transactions"
        lasted.append(mine[2].wall - mine[1].wall)
    # a descheduled server can stretch one pair; the point is that short states are seen at all
    assert min(lasted) < 0.001, f"running lasted {min(lasted) * 1e6:.0f} µs at the shortest"
    events = events_from_state_log(changes)
    assert all(e.source == "job" and e.name == "state" for e in events)
    assert [e.data["state"] for e in events] == [c.state for c in changes]


def test_times_are_converted_to_this_machines_monotonic_clock(conn):
    before = time.monotonic()
    conn.execute("INSERT INTO jobs (state, attempt) VALUES ('queued', 1)")
    after = time.monotonic()
    [change] = read_state_log(conn, 0, CONFIG)
    assert before - 0.05 <= change.t <= after + 0.05
    assert abs(change.wall - time.time()) < 5


def test_reason_attempt_and_deletes_are_logged_and_no_op_updates_are_not(conn):
    conn.execute("INSERT INTO jobs (state, attempt) VALUES ('running', 1)")
    conn.execute("UPDATE jobs SET heartbeat_at = now()")  # not a state change
    conn.execute("UPDATE jobs SET attempt = 2")
    conn.execute("UPDATE jobs SET state = 'failed', error = 'timeout: paid call'")
    conn.execute("DELETE FROM jobs")
    events = events_from_state_log(read_state_log(conn, 0, CONFIG))
    assert [(e.name, e.data.get("state"), e.data.get("reason"), e.attempt) for e in events] == [
        ("state", "running", None, 1), ("state", "running", None, 2),
        ("state", "failed", "timeout: paid call", 2), ("deleted", None, None, None)]


@pytest.mark.integration
def test_the_attempt_a_transaction_says_it_is_is_logged_with_its_writes(conn):
    conn.execute("INSERT INTO jobs (state, attempt) VALUES ('running', 2)")  # nobody said: NULL
    conn.execute("BEGIN; SELECT set_config('jobquake.attempt', '1', true);"
                 " UPDATE jobs SET state = 'done'; COMMIT;")
    conn.execute("UPDATE jobs SET state = 'failed'")  # the setting ended with its transaction
    conn.execute("BEGIN; SELECT set_config('jobquake.attempt', 'not a number', true);"
                 " UPDATE jobs SET state = 'queued'; COMMIT;")  # nonsense is no writer, never an error
    events = read_state_log(conn, 0, CONFIG)
    assert [(e.state, e.writer_attempt) for e in events] == [
        ("running", None), ("done", 1), ("failed", None), ("queued", None)]


@pytest.mark.integration
def test_reading_resumes_after_the_last_log_id(conn):
    conn.execute("INSERT INTO jobs (state) VALUES ('queued')")
    first = read_state_log(conn, 0, CONFIG)
    conn.execute("UPDATE jobs SET state = 'running'")
    more = read_state_log(conn, last_log_id(first), CONFIG)
    assert [c.state for c in more] == ["running"]
    assert read_state_log(conn, last_log_id(more), CONFIG) == []
    assert last_log_id([], default=7) == 7


def test_works_through_a_sqlalchemy_connection(conn, postgres):
    conn.execute("INSERT INTO jobs (state) VALUES ('queued')")
    engine = sqlalchemy.create_engine(postgres.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as sa_conn:
            changes = read_state_log(sa_conn, 0, CONFIG)
    finally:
        engine.dispose()
    assert [c.state for c in changes] == ["queued"]


def test_a_change_late_in_a_long_transaction_is_dated_when_made_and_when_committed(conn):
    conn.execute("BEGIN")
    conn.execute("INSERT INTO jobs (state, attempt) VALUES ('running', 1)")
    conn.execute("SELECT pg_sleep(0.2)")  # the slow call inside the transaction
    conn.execute("UPDATE jobs SET state = 'done'")
    conn.execute("SELECT pg_sleep(0.1)")
    conn.execute("COMMIT")
    running, done = read_state_log(conn, 0, CONFIG)
    assert running.op == "INSERT" and done.op == "UPDATE"
    assert done.t - running.t >= 0.2  # statement times, not the transaction's start for both
    assert done.committed_t - done.t >= 0.1  # visible only at the commit
    assert running.committed_at == done.committed_at
    assert events_from_state_log([done])[0].data["committed_t"] == done.committed_t


def test_heartbeat_moves_are_logged_apart_from_state_changes(conn):
    """A beat (the heartbeat column alone moves) is a heartbeat-log row and no state change."""
    beating = StateLogConfig(table="jobs", id_column="id", state_column="state", reason_column="error",
                             attempt_column="attempt", heartbeat_column="heartbeat_at")
    conn.execute(install_sql(beating))
    conn.execute("INSERT INTO jobs (state, attempt) VALUES ('queued', 0)")
    conn.execute("UPDATE jobs SET state = 'running', attempt = 1, heartbeat_at = now()")  # a claim: first beat
    for _ in range(3):
        conn.execute("UPDATE jobs SET heartbeat_at = clock_timestamp()")
    conn.execute("UPDATE jobs SET error = 'no beat here'")
    beats = read_heartbeats(conn, beating)
    assert [b.attempt for b in beats] == [1, 1, 1, 1]
    assert all(a.beat_wall < b.beat_wall for a, b in zip(beats, beats[1:]))
    assert [c.state for c in read_state_log(conn, 0, beating)] == ["queued", "running", "running"]
    conn.execute(uninstall_sql(beating))
