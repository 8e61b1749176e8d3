"""One real refapp stack for the session: Redis, Postgres, the fake paid API, moto, and refapp's processes.

Tests share the processes and the database; each uses its own project /
file names, so job ids never collide. Failpoints and the paid API's rules
are reset before every test.
"""
from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

import harness.failpoints
from harness._ports import free_port
from harness._wait import wait_until
from harness.failpoints.control import FailpointControl
from refapp import db, settings
from refapp.attempt import TERMINAL
from tests.common import procs as _procs

SCALE = 0.005  # 600 s soft budget -> 3 s; model deadline 120 s -> 0.6 s
USERS = "alice,bob"
WORKER_CONCURRENCY = 3


@dataclass
class Stack:
    """Addresses and handles of the running services."""

    env: dict[str, str]
    api_url: str
    paidapi_url: str
    failpoints: FailpointControl
    procs: dict[str, _procs.Proc]
    logdir: Path

    def job(self, job_id: str) -> dict[str, Any] | None:
        with db.engine().connect() as conn:
            row = conn.execute(sa.select(db.jobs).where(db.jobs.c.id == job_id)).mappings().first()
        return dict(row) if row else None

    def wait_terminal(self, job_id: str, timeout: float = 20.0) -> dict[str, Any]:
        def terminal() -> dict[str, Any] | None:
            job = self.job(job_id)
            return job if job and job["state"] in TERMINAL else None
        return wait_until(terminal, timeout=timeout, interval=0.02, what=f"job {job_id} terminal")

    def ledger(self, **filters: Any) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.paidapi_url}/_jobquake/ledger", params=filters, timeout=5)
        response.raise_for_status()
        return response.json()

    def paid_mode(self, **rule: Any) -> dict[str, Any]:
        response = httpx.post(f"{self.paidapi_url}/_jobquake/modes", json=rule, timeout=5)
        response.raise_for_status()
        return response.json()

    def submit(self, **body: Any) -> httpx.Response:
        body.setdefault("user", "alice")
        return httpx.post(f"{self.api_url}/jobs", json=body, timeout=10)


def _app_env(redis_url: str, db_url: str, paidapi_url: str, sqs_url: str, fp_dir: Path) -> dict[str, str]:
    return {
        "REFAPP_DATABASE_URL": db_url, "REFAPP_BROKER_URL": redis_url, "REFAPP_PAIDAPI_URL": paidapi_url,
        "REFAPP_SQS_ENDPOINT": sqs_url, "REFAPP_SQS_QUEUE": "refapp-test-jobs", "REFAPP_TIME_SCALE": str(SCALE),
        "REFAPP_ALLOWED_USERS": USERS, "REFAPP_WORKER_CONCURRENCY": str(WORKER_CONCURRENCY),
        "REFAPP_MAX_DOCUMENTS": "20", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        harness.failpoints.ENV_VAR: str(fp_dir),
    }


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here runs against real services."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.integration)


# package: the stack and the settings it puts in os.environ end with this folder's tests, so a
# session that goes on to other tests (the scenarios) starts their app processes with its own settings
@pytest.fixture(scope="package")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    logdir = tmp_path_factory.mktemp("refapp-logs")
    procs: dict[str, _procs.Proc] = {}
    saved_env = dict(os.environ)
    pg_root: Path | None = None
    try:
        procs["redis"], redis_url = _procs.start_redis(logdir)
        procs["postgres"], db_url, pg_root = _procs.start_postgres(logdir)
        procs["paidapi"], paidapi_url = _procs.start_paidapi(logdir, SCALE)
        procs["sqs"], sqs_url = _procs.start_moto(logdir)
        db.create_schema(db_url)
        control = FailpointControl.create(tmp_path_factory.mktemp("failpoints"))
        app_env = _app_env(redis_url, db_url, paidapi_url, sqs_url, control.path)
        os.environ.update(app_env)  # in-process refapp code sees the same settings
        settings.get.cache_clear()
        harness.failpoints.configure(control.path)
        env = {**saved_env, **app_env}
        api_port = free_port()
        api_url = f"http://127.0.0.1:{api_port}"
        py = sys.executable
        procs["worker"] = _procs.start_app("worker", [py, "-m", "refapp.worker"], logdir=logdir, env=env,
                                           ready_line=" ready.")
        procs["relay"] = _procs.start_app("relay", [py, "-m", "refapp.relay"], logdir=logdir, env=env,
                                          ready_line="relay ready")
        procs["consumer"] = _procs.start_app("consumer", [py, "-m", "refapp.consumer"], logdir=logdir,
                                             env=env, ready_line="consumer ready")
        procs["api"] = _procs.start_app("api", [py, "-m", "refapp.api", "--port", str(api_port)],
                                        logdir=logdir, env=env, health_url=f"{api_url}/health")
        yield Stack(env=env, api_url=api_url, paidapi_url=paidapi_url, failpoints=control, procs=procs,
                    logdir=logdir)
    finally:
        db.dispose_engines()
        for proc in reversed(list(procs.values())):
            proc.stop()
        harness.failpoints.configure(None)
        os.environ.clear()
        os.environ.update(saved_env)
        settings.get.cache_clear()
        if pg_root is not None:
            shutil.rmtree(pg_root, ignore_errors=True)


@pytest.fixture(autouse=True)
def clean_faults(stack: Stack) -> Iterator[None]:
    """Every test starts with no failpoint armed and a paid API that behaves."""
    stack.failpoints.reset()
    httpx.post(f"{stack.paidapi_url}/_jobquake/reset", timeout=5).raise_for_status()
    yield
    stack.failpoints.reset()
    settings.get.cache_clear()


def quiet_job(name: str, payloads: list[str], *, kind: str = "documents", route: str = "celery") -> str:
    """A job saved without an outbox message: nothing runs it unless the test does."""
    from refapp import jobstore, submit

    job_id = submit.job_id_for("quiet", name)
    with db.engine().begin() as conn:
        assert jobstore.insert_job(conn, job_id=job_id, project="quiet", file=name, user="alice", kind=kind,
                                   route=route, payloads=payloads)
    return job_id
