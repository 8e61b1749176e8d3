"""Workers: take a job id off the list, claim the job, make its one paid call, save the outcome.

The claim raises the attempt; the outcome is saved only by the attempt
that holds the job (a slow attempt the sweeper sent again cannot overwrite
the newer one). The idempotency key is the job id, the same for every
attempt, so a retried call is billed once.
"""
from __future__ import annotations

import argparse
import http.client
import json
import socket
import threading
from urllib.parse import urlsplit

import psycopg
import redis

from loadapp import settings

CLAIM = """UPDATE load_jobs SET state = 'running', attempt = attempt + 1, heartbeat_at = now()
            WHERE id = %s AND state IN ('queued', 'running') RETURNING attempt, payload"""
FINISH = "UPDATE load_jobs SET state = %s, reason = %s, output = %s WHERE id = %s AND attempt = %s"


class PaidAPI:
    """One keep-alive connection to the provider (one per worker thread)."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.conn: http.client.HTTPConnection | None = None

    def call(self, job_id: str, attempt: int, prompt: str) -> tuple[int, dict]:
        """(status, body) of one call; raises TimeoutError past the deadline, OSError when cut."""
        headers = {"Content-Type": "application/json", "Idempotency-Key": f"load:{job_id}",
                   "X-Job-Id": job_id, "X-Step": "summary", "X-Attempt": str(attempt)}
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=settings.CALL_TIMEOUT_S)
        try:
            self.conn.request("POST", "/v1/generate", json.dumps({"prompt": prompt}), headers)
            answer = self.conn.getresponse()
            return answer.status, json.loads(answer.read() or b"{}")
        except BaseException:
            self.conn.close()  # a connection cut mid-answer is not reused
            self.conn = None
            raise


def run_job(db: psycopg.Connection, api: PaidAPI, job_id: str) -> None:
    claimed = db.execute(CLAIM, (job_id,)).fetchone()
    if claimed is None:
        return  # ended already (a second copy of its id)
    attempt, payload = claimed
    try:
        status, body = api.call(job_id, attempt, payload)
    except (TimeoutError, socket.timeout):
        outcome = ("failed", "timeout", None)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        outcome = ("failed", f"error: {type(exc).__name__}", None)
    else:
        outcome = ("done", None, body.get("output")) if status == 200 else ("failed", f"error: status {status}", None)
    db.execute(FINISH, (*outcome, job_id, attempt))


def serve(stop: threading.Event) -> None:
    """One worker thread: its own database connection, provider connection and Redis client."""
    broker = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5)
    api = PaidAPI(settings.PAIDAPI_URL)
    db = None
    while not stop.is_set():
        try:
            db = db if db is not None and not db.closed else psycopg.connect(settings.DATABASE_URL, autocommit=True)
            item = broker.brpop([settings.QUEUE], timeout=1)
            if item is not None:
                run_job(db, api, item[1].decode())
        except (redis.RedisError, psycopg.OperationalError):
            db = None  # a job taken but not ended is sent again by the sweeper
            stop.wait(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--name", default="worker")
    parser.add_argument("--threads", type=int, default=settings.WORKER_THREADS)
    args = parser.parse_args()
    stop = threading.Event()
    threads = [threading.Thread(target=serve, args=(stop,), daemon=True) for _ in range(args.threads)]
    for thread in threads:
        thread.start()
    print(f"{args.name} ready.", flush=True)
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
