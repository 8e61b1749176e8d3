"""``POST /jobs`` saves a job and queues its id; ``GET /health`` answers when the API is up.

One thread per client connection (HTTP/1.1 keep-alive), each with its own
database connection. The row is committed before the id is queued: a job
whose id never reached the list is still in the table, and the sweeper
queues it again.
"""
from __future__ import annotations

import argparse
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg
import redis

from loadapp import settings

_local = threading.local()
_redis = redis.Redis.from_url(settings.REDIS_URL)


def _db() -> psycopg.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None or conn.closed:
        conn = _local.conn = psycopg.connect(settings.DATABASE_URL, autocommit=True)
    return conn


def accept(payload: str) -> str:
    """Save one job and queue it; returns its id."""
    job_id = uuid.uuid4().hex
    try:
        _db().execute("INSERT INTO load_jobs (id, payload) VALUES (%s, %s)", (job_id, payload))
    except psycopg.OperationalError:
        _local.conn = None  # the database went away: the next request connects again
        raise
    try:
        _redis.lpush(settings.QUEUE, job_id)
    except redis.RedisError:
        pass  # saved but not queued: the sweeper queues it after QUEUED_TOO_LONG_S
    return job_id


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._answer(200 if self.path == "/health" else 404, {"ok": self.path == "/health"})

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/jobs":
            return self._answer(404, {"error": "not found"})
        try:
            job_id = accept(body.decode())
        except psycopg.Error as exc:
            return self._answer(503, {"error": type(exc).__name__})
        self._answer(202, {"job_id": job_id})

    def _answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # one line per request would cost more than the request


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    server = ThreadingHTTPServer(("127.0.0.1", parser.parse_args().port), Handler)
    server.daemon_threads = True
    print("api ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
