"""The Django instrumentation in a real Django process on a real Postgres: the failpoints at its commit
and connections, and exhaust_pool with and without Django's connection pool."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from harness.failpoints.control import FailpointControl
from harness.instrument import LOADED_MARKER
from harness.instrument.control import InstrumentControl
from tests.common.postgres import postgres_service

pytestmark = pytest.mark.integration

CHILD = Path(__file__).with_name("django_child.py")


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    with postgres_service(tmp_path_factory.mktemp("pg")) as service:
        yield service


@pytest.fixture
def controls(tmp_path):
    return FailpointControl.create(tmp_path / "fp"), InstrumentControl.create(tmp_path / "instrument")


def run_child(postgres, controls, *steps: str, pool: bool = False, mode: str = "plain") -> tuple[dict, str]:
    failpoints, instrument = controls
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBQUAKE_")}
    env.update(failpoints.env())
    env.update(instrument.env(paidapi_url="http://127.0.0.1:1/v1", job_id_from="args[0]",
                              pythonpath=str(CHILD.parent.parents[1])))
    done = subprocess.run([sys.executable, str(CHILD), postgres.dsn, "pool" if pool else mode, *steps],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


def test_before_commit_sees_the_row_unseen_and_on_commit_sees_it_committed_before_the_callbacks(postgres, controls):
    failpoints, _ = controls
    run_child(postgres, controls, "create")
    for name in ("django.before_commit", "django.on_commit"):
        failpoints.arm(name, "callback", callback="note", kwargs={"where": name})
    seen, stderr = run_child(postgres, controls, "write")
    assert LOADED_MARKER in stderr
    before, after, callback = seen["notes"]
    assert before[0] == "django.before_commit" and after[0] == "django.on_commit" and callback[0] == "callback"
    assert after[1] == callback[1] == before[1] + 1  # the row is visible from the commit on, not before
    [fired] = failpoints.triggers("django.on_commit")
    assert fired["context"]["callbacks"] == 1 and fired["context"]["alias"] == "default"


def test_on_commit_fires_before_a_callback_django_runs_at_once_outside_a_transaction(postgres, controls):
    failpoints, _ = controls
    run_child(postgres, controls, "create")
    failpoints.arm("django.on_commit", "callback", callback="note", kwargs={"where": "django.on_commit"})
    seen, _ = run_child(postgres, controls, "write-autocommit")
    assert [n[0] for n in seen["notes"]] == ["django.on_commit", "callback"]
    assert not failpoints.triggers("django.before_commit")  # no transaction of Django's committed


@pytest.mark.parametrize("pool", [False, True], ids=["persistent-connection", "psycopg-pool"])
def test_exhaust_pool_at_on_commit_leaves_the_next_query_without_a_connection_until_released(
        postgres, controls, pool):
    failpoints, _ = controls
    run_child(postgres, controls, "create")
    dry = failpoints.arm("django.on_commit", "exhaust_pool", timeout=2.0)
    opened = failpoints.arm("django.connection", "return")
    seen, _ = run_child(postgres, controls, "write", "query", "query-again", pool=pool)
    # the on_commit callback still ran (the thread's connection was given back, its callbacks kept)
    assert [n[0] for n in seen["notes"]] == ["callback", "query"]
    [error] = seen["errors"]
    assert ("couldn't get a connection" in error) if pool else ("too many clients" in error), error
    assert len(dry.triggers()) == 1
    assert {t["context"]["pooled"] for t in opened.triggers()} == {pool}


def test_a_task_runs_writes_are_logged_as_the_attempt_its_claim_set(postgres, controls):
    """Run a claims attempt 1, run b takes the job over (attempt 2), then run a writes late: logged as 1."""
    from harness.evidence import StateLogConfig, install_sql, read_state_log

    log = StateLogConfig(table="child_jobs", state_column="state", attempt_column="attempt")
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS child_jobs; CREATE TABLE child_jobs "
                     "(id int PRIMARY KEY, state text NOT NULL, attempt int NOT NULL DEFAULT 0)")
        conn.execute(install_sql(log))
        conn.execute("INSERT INTO child_jobs (id, state) VALUES (1, 'queued')")
    run_child(postgres, controls, "as-run:a:1:claim", "as-run:b:2:claim", "as-run:a:1:done", "as-run:b:2:failed")
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        changes = read_state_log(conn, 0, log)
    assert [(c.state, c.attempt, c.writer_attempt) for c in changes] == [
        ("queued", 0, None), ("running", 1, 1), ("running", 2, 2), ("done", 2, 1), ("failed", 2, 2)]


def test_a_persistent_connection_cut_between_tests_is_checked_and_opened_again(postgres, controls):
    run_child(postgres, controls, "create")
    seen, _ = run_child(postgres, controls, "query", "server-restarted", "query", mode="persistent")
    assert seen["errors"] == [] and [n[0] for n in seen["notes"]] == ["query", "query"]


def test_after_write_fires_after_an_autocommit_write_committed_not_in_a_transaction_nor_for_a_read(
        postgres, controls):
    failpoints, _ = controls
    run_child(postgres, controls, "create")
    written = failpoints.arm("django.after_write", "callback", callback="note", kwargs={"where": "after_write"})
    seen, _ = run_child(postgres, controls, "query", "write", "write-autocommit")
    # the atomic block's INSERT and the read did not fire it; the autocommit INSERT did, once it was visible
    rows = seen["notes"][0][1]
    assert [n[0] for n in seen["notes"]] == ["query", "callback", "after_write", "callback"]
    assert seen["notes"][2][1] == rows + 2
    [fired] = written.triggers()
    assert fired["context"]["table"] == "child_rows" and fired["context"]["alias"] == "default"


def test_exhaust_pool_at_after_write_keeps_the_statements_result_and_refuses_the_next_query(postgres, controls):
    failpoints, _ = controls
    run_child(postgres, controls, "create")
    dry = failpoints.arm("django.after_write", "exhaust_pool", timeout=2.0)
    seen, _ = run_child(postgres, controls, "insert-returning", "query", "query-again")
    assert [n[0] for n in seen["notes"]] == ["inserted", "query"]  # the INSERT's RETURNING still read
    [error] = seen["errors"]
    assert "too many clients" in error, error
    assert len(dry.triggers()) == 1
