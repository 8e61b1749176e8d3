"""exhaust_pool against a real Postgres: the app's pool is empty, the server sees the held sessions."""
from __future__ import annotations

import pytest
import sqlalchemy

from harness import failpoints
from harness._ports import free_port, release_port
from harness._wait import wait_until
from harness.failpoints import _registry, failpoint
from harness.failpoints.control import FailpointControl
from harness.stack.postgres import PostgresService

pytestmark = pytest.mark.integration

APP_NAME = "jobquake-failpoint-test"  # tags the app's sessions in pg_stat_activity


@pytest.fixture
def postgres(tmp_path):
    service = PostgresService("postgres", port=free_port(), workdir=tmp_path / "pg")
    service.start()
    yield service
    service.stop()
    service.remove_data()
    release_port(service.port)


@pytest.fixture
def control(tmp_path):
    ctl = FailpointControl.create(tmp_path / "fp")
    failpoints.configure(ctl.path)
    yield ctl
    ctl.disarm_all()
    failpoints.configure(None)
    _registry.resources.clear()


def _app_sessions(postgres: PostgresService) -> int:
    with postgres.connect() as conn:
        return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                            (APP_NAME,)).fetchone()[0]


def test_exhaust_pool_holds_every_connection_until_released(postgres, control):
    engine = sqlalchemy.create_engine(postgres.url, pool_size=2, max_overflow=2, pool_timeout=0.2,
                                      connect_args={"application_name": APP_NAME})
    try:
        failpoints.register_resource("db_engine", engine)
        armed = control.arm("submit.before_enqueue", "exhaust_pool")
        assert failpoint("submit.before_enqueue", job_id="j1") is None
        assert _app_sessions(postgres) == 4  # pool_size + max_overflow, all open on the server
        with pytest.raises(sqlalchemy.exc.TimeoutError, match="QueuePool limit of size 2 overflow 2"):
            with engine.connect() as conn:
                conn.execute(sqlalchemy.text("SELECT 1"))
        armed.release()
        wait_until(lambda: engine.pool.checkedout() == 0, timeout=10, what="connections returned")
        with engine.connect() as conn:
            assert conn.execute(sqlalchemy.text("SELECT 1")).scalar() == 1
        assert [t["context"] for t in armed.triggers()] == [{"job_id": "j1"}]
    finally:
        engine.dispose()
