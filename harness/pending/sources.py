"""The readers of one running stack, in the order ``Run.settle`` polls them."""
from __future__ import annotations

from typing import Any

import psycopg

from harness.pending.broker import read_redis_broker
from harness.pending.calls import calls_in_flight
from harness.pending.database import pending_jobs, pending_queries
from harness.pending.settle import Reader
from harness.pending.sqs import read_sqs


class Sources:
    """Job table, app queries, paid API, Redis broker, SQS: every place work can wait, for one test.

    Clients are made on first use from the stack's own services (whatever
    backend or SQS server the stack runs) and kept for the test: a poll
    costs a few queries, not a few connections. ``close()`` before the
    test's database is dropped.
    """

    def __init__(self, run: Any):
        self.run = run
        self._db: psycopg.Connection | None = None
        self._redis: Any = None
        self._sqs: Any = None

    def db(self) -> psycopg.Connection:
        if self._db is None or self._db.closed or self._db.broken:
            self._db = psycopg.connect(self.run.stack.postgres.dsn, autocommit=True, connect_timeout=5)
        return self._db

    def redis(self) -> Any:
        if self._redis is None:
            self._redis = self.run.stack.redis.client()
        return self._redis

    def sqs(self) -> Any:
        if self._sqs is None:
            self._sqs = self.run.stack.sqs.client()
        return self._sqs

    def readers(self) -> dict[str, Reader]:
        run = self.run
        # the job table first: while a job runs, a poll is one query on a kept connection and
        # nothing else (the paid API serialises its whole ledger per read: not at 50 reads a second)
        return {
            "job table": lambda: pending_jobs(run.jobs, self.db()),
            "pending_queries": lambda: pending_queries(self.db(), tuple(run.config.pending_queries)),
            "paid API": lambda: calls_in_flight(run.paidapi.ledger()),
            "redis broker": lambda: read_redis_broker(self.redis()),
            "sqs": lambda: read_sqs(self.sqs()),
        }

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
        if self._redis is not None:
            self._redis.close()
        self._db = self._redis = self._sqs = None
