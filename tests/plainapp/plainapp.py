"""An ordinary Celery + SQLAlchemy app that knows nothing of jobquake (it imports nothing from it).

Its own names: table ``work_items`` (``item_id``, ``status``, ``why``,
``tries``, ``touched_at``, ``worker_pid``), states ``new`` / ``running`` /
``finished`` / ``broken``, env vars ``PLAIN_*``. Each task records the pid
of the process that ran it, so tests can compare it with the paid API's
ledger.
"""
import os

import httpx
import requests
from celery import Celery
from sqlalchemy import create_engine, text

app = Celery("plainapp", broker=os.environ.get("PLAIN_BROKER", "redis://127.0.0.1:1/0"))
app.conf.update(task_acks_late=True, worker_prefetch_multiplier=1, broker_connection_retry_on_startup=True)
_engine = None


def create_schema(url):
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE work_items (item_id text PRIMARY KEY, status text NOT NULL, why text, "
                          "tries int NOT NULL DEFAULT 0, touched_at timestamptz NOT NULL DEFAULT now(), "
                          "worker_pid int)"))
    engine.dispose()


def engine():
    global _engine
    if _engine is None:
        # small, with a short wait: an exhausted pool shows within a second
        _engine = create_engine(os.environ["PLAIN_DB"], pool_pre_ping=True, pool_size=2, max_overflow=0,
                                pool_timeout=1)
    return _engine


def mark(item_id, status, why=None):
    with engine().begin() as conn:
        conn.execute(text("UPDATE work_items SET status = :s, why = :w, tries = tries + (:s = 'running')::int, "
                          "touched_at = now(), worker_pid = :pid WHERE item_id = :id"),
                     {"s": status, "w": why, "pid": os.getpid(), "id": item_id})


def model_url(name):
    return os.environ["PLAIN_MODEL_URL"].rstrip("/") + "/v1/" + name


@app.task(name="plain.with_httpx")
def with_httpx(item_id):
    mark(item_id, "running")
    with httpx.Client(timeout=10) as client:
        client.post(model_url("classify"), json={"prompt": item_id}).raise_for_status()
    mark(item_id, "finished")


@app.task(name="plain.with_requests")
def with_requests(item_id):
    mark(item_id, "running")
    requests.post(model_url("summarize"), json={"prompt": item_id}, timeout=10).raise_for_status()
    mark(item_id, "finished")


@app.task(name="plain.retried", bind=True, max_retries=1)
def retried(self, item_id):
    """Calls the model, then asks for one retry (as after a transient error), and finishes on the retry."""
    mark(item_id, "running")
    httpx.post(model_url("classify"), json={"prompt": f"{item_id}:{self.request.retries}"}, timeout=10)
    if self.request.retries == 0:
        raise self.retry(countdown=0)
    mark(item_id, "finished")


@app.task(name="plain.write_then_read")
def write_then_read(item_id):
    """A write, then the next checkout: what an exhausted pool between the two breaks."""
    mark(item_id, "running")
    with engine().connect() as conn:
        conn.execute(text("SELECT 1"))
    mark(item_id, "finished")
