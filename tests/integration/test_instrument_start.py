"""Checked at start: a process the instrumentation cannot load into, a job table config gets wrong."""
from __future__ import annotations

import dataclasses
import logging

import pytest

from harness._ports import free_port
from harness.config import resolve
from harness.errors import ConfigError, ServiceError
from harness.instrument import ENV_DIR
from harness.instrument.control import InstrumentControl
from harness.stack import reaper
from harness.stack.app import AppProcess
from harness.stack.readiness import ReadyCheck
from harness.stack.stack import Stack
from tests.common.processes import alive
from tests.integration.test_instrument import PLAINAPP

pytestmark = pytest.mark.integration

SERVER = "python -c \"import time; print('up', flush=True); time.sleep(60)\""


def app_process(tmp_path, env, command=SERVER) -> AppProcess:
    return AppProcess("api", command=command, values={}, ready=ReadyCheck.parse("log:^up"), start_timeout=10,
                      port=free_port(), workdir=tmp_path / "app", env=env)


def instrumented_env(tmp_path) -> dict[str, str]:
    return InstrumentControl.create(tmp_path / "instrument").env(paidapi_url="http://127.0.0.1:1",
                                                                 job_id_from="")


def test_a_process_it_loads_into_starts(tmp_path):
    proc = app_process(tmp_path, instrumented_env(tmp_path))
    try:
        proc.start()
        assert proc.is_running()
    finally:
        proc.stop()


def test_instrumentation_that_fails_to_load_fails_the_start_naming_process_and_why(tmp_path):
    env = {**instrumented_env(tmp_path), ENV_DIR: str(tmp_path / "missing")}
    proc = app_process(tmp_path, env)
    with pytest.raises(ServiceError) as caught:
        proc.start()
    message = str(caught.value)
    assert "[api] jobquake's instrumentation did not load into process 'api'" in message
    assert f"{ENV_DIR}={str(tmp_path / 'missing')!r} is not a folder" in message
    assert not alive(proc.pid)


def test_a_process_python_never_loads_site_into_fails_the_start(tmp_path):
    proc = app_process(tmp_path, instrumented_env(tmp_path), command=SERVER.replace("python -c", "python -S -c"))
    with pytest.raises(ServiceError, match="did not load into process 'api': no Python interpreter"):
        proc.start()
    assert not alive(proc.pid)


def test_a_wrong_job_state_column_fails_the_start_naming_the_columns():
    config = resolve(cli={"job_state_column": "state", "workers": 0}, environ={}, pyproject=PLAINAPP / "pyproject.toml")
    stack = Stack(config, reaper.run_dir() / "plain-wrong-column")
    with pytest.raises(ConfigError) as caught:
        stack.start()
    assert str(caught.value) == ("job_state_column = 'state': table 'work_items' has no such column; its "
                                 "columns: item_id, status, why, tries, touched_at, worker_pid")
    assert caught.value.key == "job_state_column"
    assert not any(svc.is_running() for svc in stack.services())


def test_a_wrong_job_table_names_the_tables_that_exist():
    config = resolve(cli={"job_table": "jobs", "workers": 0}, environ={}, pyproject=PLAINAPP / "pyproject.toml")
    stack = Stack(config, reaper.run_dir() / "plain-wrong-table")
    with pytest.raises(ConfigError, match=r"^job_table = 'jobs': the schema has no such table; its tables: "
                                          r"work_items"):
        stack.start()


@pytest.fixture
def postgres(tmp_path):
    from harness._ports import release_port
    from harness.stack.postgres import PostgresService

    service = PostgresService("postgres", port=free_port(), workdir=tmp_path / "pg")
    service.start()
    yield service
    service.stop()
    service.remove_data()
    release_port(service.port)


def test_terminal_states_must_be_values_of_an_enum_state_column(postgres):
    import psycopg

    from harness.evidence import JobTable

    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute("CREATE TYPE phase AS ENUM ('waiting', 'complete', 'error')")
        conn.execute("CREATE TABLE runs (run_id text PRIMARY KEY, phase phase NOT NULL)")
    table = JobTable("runs", "run_id", "phase", None, None, None, ("complete", "failed"))
    with pytest.raises(ConfigError, match=r"^terminal_states: 'failed' not a value of runs.phase; its values: "
                                          r"waiting, complete, error$"):
        table.check(postgres.dsn)
    JobTable("runs", "run_id", "phase", None, None, None, ("complete", "error")).check(postgres.dsn)


def test_an_optional_column_left_at_its_default_is_not_read_when_the_table_lacks_it(caplog):
    # plainapp's table has no `attempt`: as if its config had left job_attempt_column unset
    base = resolve(cli={"workers": 0}, environ={}, pyproject=PLAINAPP / "pyproject.toml")
    config = dataclasses.replace(base, job_attempt_column="attempt",
                                 sources={**base.sources, "job_attempt_column": "default"})
    stack = Stack(config, reaper.run_dir() / "plain-default-column")
    caplog.set_level(logging.INFO, logger="harness.evidence")
    try:
        stack.start()
        jobs = stack.job_table(config)
        assert jobs.attempt_column is None and jobs.reason_column == "why"
        assert not jobs.snapshot(stack.postgres.dsn).jobs  # the query names no missing column
        assert "job_attempt_column = 'attempt' (its default): table 'work_items' has no such column" in caplog.text
    finally:
        stack.stop()


def test_an_optional_column_set_by_the_user_that_the_table_lacks_still_fails_the_start():
    config = resolve(cli={"job_attempt_column": "attempt", "workers": 0}, environ={},
                     pyproject=PLAINAPP / "pyproject.toml")
    stack = Stack(config, reaper.run_dir() / "plain-set-column")
    with pytest.raises(ConfigError, match=r"^job_attempt_column = 'attempt': table 'work_items' has no such column"):
        stack.start()
