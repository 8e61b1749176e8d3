"""exhaust_pool on a SQLAlchemy QueuePool over SQLite: the pool logic without a server.

The same action against a real Postgres is in
tests/integration/test_failpoints_postgres.py.
"""
from __future__ import annotations

import pytest
import sqlalchemy
from sqlalchemy.pool import NullPool, QueuePool

from harness import failpoints
from harness._wait import wait_until
from harness.errors import FaultError
from harness.failpoints import _registry, failpoint
from harness.failpoints.control import FailpointControl

POOL_TIMEOUT = 0.05  # how long the app's checkout waits once the pool is empty


@pytest.fixture
def control(tmp_path):
    ctl = FailpointControl.create(tmp_path / "fp")
    failpoints.configure(ctl.path)
    yield ctl
    ctl.disarm_all()
    failpoints.configure(None)
    _registry.resources.clear()


@pytest.fixture
def engine(tmp_path):
    eng = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'app.db'}", poolclass=QueuePool,
                                   pool_size=2, max_overflow=1, pool_timeout=POOL_TIMEOUT)
    yield eng
    eng.dispose()


def _can_query(engine) -> bool:
    with engine.connect() as conn:
        return conn.execute(sqlalchemy.text("SELECT 1")).scalar() == 1


def test_exhaust_pool_starves_the_app_until_released(control, engine):
    failpoints.register_resource("db_engine", engine)
    with engine.connect():  # the app holds one connection when it reaches the seam
        armed = control.arm("submit.before_enqueue", "exhaust_pool")
        assert failpoint("submit.before_enqueue", job_id="j1") is None  # returns at once
        assert engine.pool.checkedout() == 3  # ours plus the two the failpoint took
        with pytest.raises(sqlalchemy.exc.TimeoutError, match="QueuePool limit"):
            engine.connect()
    armed.release()
    wait_until(lambda: engine.pool.checkedout() == 0, timeout=5, what="held connections returned")
    assert _can_query(engine)


def test_disarm_gives_the_connections_back(control, engine):
    failpoints.register_resource("db", engine)
    control.arm("p", "exhaust_pool", resource="db")
    failpoint("p")
    assert engine.pool.checkedout() == 3
    control.disarm("p")
    wait_until(lambda: engine.pool.checkedout() == 0, timeout=5, what="held connections returned")


def test_the_hold_ends_at_its_bound(control, engine):
    failpoints.register_resource("db_engine", engine)
    control.arm("p", "exhaust_pool", timeout=0.05)
    failpoint("p")
    wait_until(lambda: engine.pool.checkedout() == 0, timeout=5, what="held connections returned")


def test_unregistered_resource_is_a_fault_error(control):
    armed = control.arm("p", "exhaust_pool", resource="missing_engine")
    with pytest.raises(FaultError, match="no resource registered as 'missing_engine'"):
        failpoint("p")
    with pytest.raises(FaultError, match="missing_engine"):
        armed.wait(timeout=5)


def test_unbounded_pool_is_a_fault_error(control, tmp_path):
    unbounded = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'x.db'}", poolclass=NullPool)
    failpoints.register_resource("db_engine", unbounded)
    control.arm("p", "exhaust_pool")
    with pytest.raises(FaultError, match="neither a SQLAlchemy Engine nor a QueuePool"):
        failpoint("p")
