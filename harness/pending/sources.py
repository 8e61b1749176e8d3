"""The readers of one running stack, cheapest first: what ``Run.settle`` polls."""
from __future__ import annotations

from typing import Any

from harness.pending.broker import read_redis_broker
from harness.pending.calls import calls_in_flight
from harness.pending.database import pending_jobs, pending_queries
from harness.pending.settle import Reader
from harness.pending.sqs import read_sqs

BROKER = "redis broker"
SQS = "sqs"
TRANSPORTS = (BROKER, SQS)  # where messages wait: purged between tests


def readers_for(run: Any) -> dict[str, Reader]:
    """Paid API, job table, app queries, Redis broker, SQS: every place work can wait.

    Clients are made on first use, from the stack's own services (whatever
    backend or SQS server the stack runs).
    """
    clients: dict[str, Any] = {}

    def client(name: str) -> Any:
        if name not in clients:
            clients[name] = run.stack.redis.client() if name == BROKER else run.stack.sqs.client()
        return clients[name]

    return {
        "paid API": lambda: calls_in_flight(run.paidapi.ledger()),
        "job table": lambda: pending_jobs(run.jobs, run.database_dsn),
        "pending_queries": lambda: pending_queries(run.database_dsn, tuple(run.config.pending_queries)),
        BROKER: lambda: read_redis_broker(client(BROKER)),
        SQS: lambda: read_sqs(client(SQS)),
    }
