"""Queue again the jobs nobody is working on: never taken, or claimed by a worker that died."""
from __future__ import annotations

import time

import psycopg
import redis

from loadapp import settings

LEFT_BEHIND = """SELECT id FROM load_jobs
                  WHERE (state = 'queued' AND created_at < now() - make_interval(secs => %s))
                     OR (state = 'running' AND heartbeat_at < now() - make_interval(secs => %s))"""


def sweep(db: psycopg.Connection, broker: redis.Redis) -> int:
    ids = [row[0] for row in db.execute(LEFT_BEHIND, (settings.QUEUED_TOO_LONG_S, settings.STALE_AFTER_S))]
    if ids:
        broker.lpush(settings.QUEUE, *ids)
    return len(ids)


def main() -> None:
    broker = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5)
    print("sweeper ready", flush=True)
    db = None
    while True:
        try:
            db = db if db is not None and not db.closed else psycopg.connect(settings.DATABASE_URL, autocommit=True)
            sweep(db, broker)
        except (redis.RedisError, psycopg.OperationalError):
            db = None
        time.sleep(settings.SWEEP_EVERY_S)


if __name__ == "__main__":
    main()
