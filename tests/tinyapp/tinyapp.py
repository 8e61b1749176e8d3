"""A deliberately small job system for the plugin's own tests: one table, one task, one paid call.

It is what a user's app looks like to jobquake: it reads its own env vars,
which ``[tool.jobquake.env]`` fills from the stack.
"""
import os

import httpx
from celery import Celery
from sqlalchemy import create_engine, text

app = Celery("tinyapp", broker=os.environ.get("TINY_BROKER", "redis://127.0.0.1:1/0"))
app.conf.update(task_acks_late=True, worker_prefetch_multiplier=1, broker_connection_retry_on_startup=True)
_engine = None


def create_schema(url):
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE jobs (id text PRIMARY KEY, state text NOT NULL, reason text, "
                          "attempt int NOT NULL DEFAULT 1, heartbeat_at timestamptz)"))
    engine.dispose()


def engine():
    global _engine
    if _engine is None:
        _engine = create_engine(os.environ["TINY_DB"], pool_pre_ping=True)
    return _engine


def set_state(job_id, state):
    with engine().begin() as conn:
        conn.execute(text("UPDATE jobs SET state = :s WHERE id = :id"), {"s": state, "id": job_id})


@app.task(name="tiny.work")
def work(job_id, finish=True):
    set_state(job_id, "processing")
    httpx.post(os.environ["TINY_PAIDAPI"] + "/v1/generate", json={"prompt": job_id}, timeout=10,
               headers={"Idempotency-Key": f"{job_id}:label", "X-Job-Id": job_id, "X-Step": "label"})
    if finish:
        set_state(job_id, "done")
