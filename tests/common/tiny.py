"""A session stack running the small test app, for tests that need the whole stack."""
from __future__ import annotations

from pathlib import Path

import psycopg
from celery import Celery

from harness.config import resolve
from harness.run import Run
from harness.stack import reaper
from harness.stack.stack import Stack

TINYAPP = Path(__file__).parent.parent / "tinyapp"


def tiny_stack(**overrides) -> Stack:
    config = resolve(cli=overrides, environ={}, pyproject=TINYAPP / "pyproject.toml")
    return Stack(config, reaper.run_dir() / "tiny-stack")


def submit(run: Run, job_id: str, finish: bool = True) -> None:
    """Write a job row and enqueue its task, as the tiny app's API would."""
    with psycopg.connect(run.database_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (id, state) VALUES (%s, 'queued')", (job_id,))
    run.record.submission(job_id, status=202)
    Celery(broker=run.redis_url).send_task("tiny.work", args=[job_id, finish])


def job_state(run: Run, job_id: str) -> str | None:
    with psycopg.connect(run.database_dsn, autocommit=True) as conn:
        row = conn.execute("SELECT state FROM jobs WHERE id = %s", (job_id,)).fetchone()
    return row[0] if row else None
