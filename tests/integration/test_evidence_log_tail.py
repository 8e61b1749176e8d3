"""Reading the state log and heartbeat log as they grow, in a real Postgres: no row lost, none twice."""
from __future__ import annotations

import psycopg
import pytest

from harness.evidence import JobTable, read_state_log
from harness.evidence.job_logs import JobLogs
from harness.evidence.log_tail import LogTail
from tests.integration.test_evidence_state_log import CONFIG, conn, postgres  # noqa: F401 - fixtures

pytestmark = pytest.mark.integration

JOBS = JobTable(table="jobs", id_column="id", state_column="state", reason_column="error",
                attempt_column="attempt", heartbeat_column="heartbeat_at", terminal_states=("done",))


def state_tail() -> LogTail:
    return LogTail(CONFIG.qualified(CONFIG.log_table), lambda c, since: read_state_log(c, since, CONFIG))


def test_a_row_that_commits_after_a_later_one_was_read_is_read_next_time(conn, postgres):  # noqa: F811
    conn.execute("INSERT INTO jobs (state, attempt) VALUES ('queued', 1), ('queued', 1)")
    tail = state_tail()
    assert [c.state for c in tail.read(conn)] == ["queued", "queued"]
    with psycopg.connect(postgres) as slow:  # a transaction that logs first and commits last
        slow.execute("UPDATE jobs SET state = 'running' WHERE id = 1")
        conn.execute("UPDATE jobs SET state = 'done' WHERE id = 2")
        first = tail.read(conn)
        assert [(c.job_id, c.state) for c in first] == [("2", "done")]
        slow.commit()
    late = tail.read(conn)
    assert [(c.job_id, c.state) for c in late] == [("1", "running")]
    # what reading on from the last id seen would have lost
    assert read_state_log(conn, first[0].log_id, CONFIG) == []
    assert late[0].log_id < first[0].log_id
    everything = read_state_log(conn, 0, CONFIG)
    assert sorted(c.log_id for c in tail.rows) == [c.log_id for c in everything]



def test_a_row_of_the_newest_transaction_still_open_at_two_reads_is_read_once_it_commits(conn, postgres):  # noqa: F811
    """A snapshot's xmax is the newest *completed* transaction id plus one, not the next id to be handed
    out: a transaction that logged a row and is the newest one running is at or above it. A read marked
    safe by such an xmax would move the cursor past that row before it commits, and no later read would
    ask for it (both logs of one claim lost at once, seen as a stream telling a state "the database did
    not have"). Nothing else commits here between the open write and the reads."""
    conn.execute("INSERT INTO jobs (state, attempt) VALUES ('queued', 1)")
    tail = state_tail()
    assert [c.state for c in tail.read(conn)] == ["queued"]
    with psycopg.connect(postgres) as slow:
        slow.execute("UPDATE jobs SET state = 'running' WHERE id = 1")
        assert tail.read(conn) == []
        assert tail.read(conn) == []
        slow.commit()
    assert [(c.job_id, c.state) for c in tail.read(conn)] == [("1", "running")]


def test_once_quiet_a_read_returns_nothing_and_reads_nothing_again(conn):  # noqa: F811
    tail = state_tail()
    conn.execute("INSERT INTO jobs (state) SELECT 'queued' FROM generate_series(1, 50)")
    assert len(tail.read(conn)) == 50
    assert tail.read(conn) == []
    # no transaction was running: the safe cursor is past every row, so the next read asks for none of them
    assert tail._safe == max(c.log_id for c in tail.rows)
    conn.execute("UPDATE jobs SET state = 'done' WHERE id <= 10")
    assert [c.state for c in tail.read(conn)] == ["done"] * 10
    assert len(tail.rows) == 60


def test_a_missing_log_reads_as_not_found(conn):  # noqa: F811
    tail = LogTail(CONFIG.qualified("no_such_log"), lambda c, since: read_state_log(c, since, CONFIG))
    assert tail.found is None
    assert tail.read(conn) == []
    assert tail.found is False


def test_job_logs_give_each_change_and_beat_once(conn, postgres):  # noqa: F811
    conn.execute("DROP TRIGGER IF EXISTS jobquake_state_log_jobs_trg ON jobs")
    JOBS.install_state_log(postgres)  # with the heartbeat column: beats logged too
    logs = JobLogs(JOBS, postgres)
    try:
        assert logs.read_new() == ([], [])
        assert logs.beats == [] and logs.changes == []
        conn.execute("INSERT INTO jobs (state, attempt, heartbeat_at) VALUES ('running', 1, now())")
        changes, beats = logs.read_new()
        assert [c.state for c in changes] == ["running"] and len(beats) == 1
        conn.execute("UPDATE jobs SET heartbeat_at = now() + interval '1 second'")
        conn.execute("UPDATE jobs SET state = 'done'")
        changes, beats = logs.read_new()
        assert [c.state for c in changes] == ["done"] and len(beats) == 1
        assert [c.state for c in logs.changes] == ["running", "done"] and len(logs.beats) == 2
    finally:
        logs.close()


def test_without_a_heartbeat_column_there_is_no_heartbeat_evidence(conn, postgres):  # noqa: F811
    logs = JobLogs(JobTable("jobs", "id", "state", "error", "attempt", None, ("done",)), postgres)
    try:
        conn.execute("INSERT INTO jobs (state) VALUES ('queued')")
        assert [c.state for c in logs.read_new()[0]] == ["queued"]
        assert logs.beats is None
    finally:
        logs.close()
