"""Job status events: published on Redis pub/sub after the DB commit, relayed to browsers by the API.

The order is the point: a worker writes the state to the database, commits,
and only then publishes. If an event is lost, the database is still right
and a refresh shows the truth; an event is never ahead of the database.
"""
from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

import redis

from refapp import settings

log = logging.getLogger(__name__)

CHANNEL = "refapp:job-events"
TERMINAL = ("done", "failed", "needs_human")

_clients: dict[int, redis.Redis] = {}


def job_event(job_id: str, state: str, reason: str | None, attempt: int | None) -> dict[str, Any]:
    """The event for one committed state change."""
    return {"job_id": job_id, "state": state, "reason": reason, "attempt": attempt, "at": time.time()}


def _client() -> redis.Redis:
    client = _clients.get(os.getpid())
    if client is None:
        client = redis.Redis.from_url(settings.get().events_url, socket_timeout=2, socket_connect_timeout=2)
        _clients[os.getpid()] = client
    return client


def publish(event: dict[str, Any]) -> None:
    """Send ``event`` to every listener; a Redis outage loses the event, never the job."""
    try:
        _client().publish(CHANNEL, json.dumps(event))
    except redis.RedisError as exc:
        log.warning("status event for job %s not sent (%s); the database has the state",
                    event.get("job_id"), exc)


def decode(data: bytes | str) -> dict[str, Any] | None:
    """An event from its wire form, or None if it is not one."""
    try:
        event = json.loads(data)
    except ValueError:
        return None
    return event if isinstance(event, dict) and "job_id" in event else None
