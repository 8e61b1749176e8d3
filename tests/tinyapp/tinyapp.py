"""A deliberately small job system for the plugin's own tests: one table, one task, one paid call.

It is what a user's app looks like to jobquake: it reads its own env vars,
which ``[tool.jobquake.env]`` fills from the stack. Its pool is small and
registered as failpoint resource ``db_engine``; ``tiny.work`` passes the
failpoint ``tiny.after_processing``; ``tiny.sweep`` doubles every ``items``
row and records the sweep in ``sweeps`` (a row whose value is not a number
makes the whole sweep fail, as a careless sweep does). ``tiny.retry_later``
marks its job failed, then retries it with a countdown, which pays and
finishes it: work that lands after a terminal state.
"""
import logging
import os

import httpx
from celery import Celery
from sqlalchemy import create_engine, text

from harness.failpoints import failpoint, register_resource

app = Celery("tinyapp", broker=os.environ.get("TINY_BROKER", "redis://127.0.0.1:1/0"))
app.conf.update(task_acks_late=True, worker_prefetch_multiplier=1, broker_connection_retry_on_startup=True)
_engine = None


def create_schema(url):
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE jobs (id text PRIMARY KEY, state text NOT NULL, reason text, "
                          "attempt int NOT NULL DEFAULT 1, heartbeat_at timestamptz)"))
        conn.execute(text("CREATE TABLE items (id int PRIMARY KEY, value text NOT NULL, doubled int)"))
        conn.execute(text("CREATE TABLE sweeps (id text PRIMARY KEY, state text NOT NULL, processed int, "
                          "reason text)"))
    engine.dispose()


def engine():
    global _engine
    if _engine is None:
        # a small pool with a short wait, so an exhausted pool shows within a test
        _engine = create_engine(os.environ["TINY_DB"], pool_pre_ping=True, pool_size=2, max_overflow=0,
                                pool_timeout=1)
        register_resource("db_engine", _engine)
        logging.getLogger("sqlalchemy.pool").setLevel(logging.INFO)  # a pre-ping reconnect shows in the log
    return _engine


def set_state(job_id, state):
    with engine().begin() as conn:
        conn.execute(text("UPDATE jobs SET state = :s WHERE id = :id"), {"s": state, "id": job_id})


@app.task(name="tiny.work")
def work(job_id, finish=True):
    set_state(job_id, "processing")
    failpoint("tiny.after_processing", job_id=job_id)
    httpx.post(os.environ["TINY_PAIDAPI"] + "/v1/generate", json={"prompt": job_id}, timeout=10,
               headers={"Idempotency-Key": f"{job_id}:label", "X-Job-Id": job_id, "X-Step": "label",
                        "X-Caller-Pid": str(os.getpid())})
    if finish:
        set_state(job_id, "done")


@app.task(name="tiny.sweep")
def sweep(sweep_id):
    with engine().begin() as conn:
        conn.execute(text("INSERT INTO sweeps (id, state, processed) VALUES (:id, 'running', 0)"), {"id": sweep_id})
    processed = 0
    try:
        with engine().begin() as conn:
            for row_id, value in conn.execute(text("SELECT id, value FROM items ORDER BY id")).all():
                conn.execute(text("UPDATE items SET doubled = :d WHERE id = :id"), {"d": int(value) * 2, "id": row_id})
                processed += 1
    except ValueError as exc:
        with engine().begin() as conn:
            conn.execute(text("UPDATE sweeps SET state = 'failed', processed = :n, reason = :r WHERE id = :id"),
                         {"n": processed, "r": str(exc), "id": sweep_id})
        raise
    with engine().begin() as conn:
        conn.execute(text("UPDATE sweeps SET state = 'done', processed = :n WHERE id = :id"),
                     {"n": processed, "id": sweep_id})


@app.task(name="tiny.retry_later", bind=True, max_retries=1)
def retry_later(self, job_id, countdown):
    """Fails the job (a terminal state), then a retry scheduled ``countdown`` s later pays and finishes it."""
    if self.request.retries == 0:
        set_state(job_id, "failed")
        raise self.retry(countdown=countdown)
    httpx.post(os.environ["TINY_PAIDAPI"] + "/v1/generate", json={"prompt": job_id}, timeout=10,
               headers={"Idempotency-Key": f"{job_id}:retry", "X-Job-Id": job_id, "X-Step": "retry"})
    set_state(job_id, "done")
