"""What a Celery app's Redis broker still holds: queued, handed-out and scheduled messages.

kombu's Redis transport keeps (``kombu/transport/redis.py``):

* each queue as a Redis list named after the queue, plus one list per
  priority step (``<queue>\\x06\\x16<3|6|9>``); the queues an exchange routes
  to are the members ``routing_key\\x06\\x16pattern\\x06\\x16queue`` of the set
  ``_kombu.binding.<exchange>``;
* every message handed to a consumer and not yet acknowledged in the hash
  ``unacked`` (delivery tag -> ``[payload, exchange, routing_key]``) and the
  sorted set ``unacked_index`` (delivery tag -> when it was handed out). A
  worker holds a task with an ETA or countdown (a scheduled retry) unacked
  until it runs, so this hash is also where scheduled deliveries show, with
  the ETA in the message's headers; a dead worker's message stays there
  until the transport's restore sweep puts it back in its queue.

A message taken from a list and not yet written to ``unacked`` is in no
key for the moment between the two (kombu does not do both atomically):
settling reads twice in a row for that reason (``settle.py``).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness.pending.item import PendingWork

BINDING_PREFIX = "_kombu.binding."
SEP = "\x06\x16"
PRIORITY_STEPS = (0, 3, 6, 9)  # kombu's default priority_steps
UNACKED = "unacked"
UNACKED_INDEX = "unacked_index"
UNACKED_MUTEX = "unacked_mutex"
# remote-control and event exchanges: their queues carry replies, never work
CONTROL_MARKERS = ("pidbox", "celeryev")
SHOWN = 3  # messages named in a report line


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def work_queues(client: Any) -> list[str]:
    """Names of the queues bound to the broker's work exchanges (control exchanges left out)."""
    queues: set[str] = set()
    for key in client.scan_iter(match=BINDING_PREFIX + "*", count=100):
        exchange = _text(key)[len(BINDING_PREFIX):]
        if any(marker in exchange for marker in CONTROL_MARKERS):
            continue
        for member in client.smembers(key):
            queue = _text(member).split(SEP)[-1]
            if queue and not any(marker in queue for marker in CONTROL_MARKERS):
                queues.add(queue)
    return sorted(queues)


def queue_keys(queue: str) -> list[str]:
    """The Redis lists holding ``queue``: the queue itself and one per priority step."""
    return [queue if step == 0 else f"{queue}{SEP}{step}" for step in PRIORITY_STEPS]


def describe_message(payload: Any) -> dict[str, Any]:
    """Task name, id, ETA and arguments of a kombu message payload (JSON text or dict)."""
    try:
        raw = json.loads(payload) if isinstance(payload, (str, bytes)) else payload
        headers = raw.get("headers") or {}
    except (ValueError, AttributeError):
        return {}
    return {key: headers.get(key) for key in ("task", "id", "eta", "retries", "argsrepr", "kwargsrepr")
            if headers.get(key) is not None}


def _message_line(info: dict[str, Any]) -> str:
    parts = [str(info.get("task", "?")), f"id={info.get('id', '?')}"]
    if info.get("eta"):
        parts.append(f"eta={info['eta']}")
    if info.get("retries"):
        parts.append(f"retries={info['retries']}")
    args = " ".join(str(info[k]) for k in ("argsrepr", "kwargsrepr") if info.get(k) not in (None, "()", "{}"))
    return " ".join(parts) + (f" {args}" if args else "")


def queued(client: Any) -> list[PendingWork]:
    """One item per non-empty work queue: messages no consumer has taken yet."""
    items = []
    for queue in work_queues(client):
        for key in queue_keys(queue):
            count = client.llen(key)
            if not count:
                continue
            shown = [_message_line(describe_message(m)) for m in client.lrange(key, -SHOWN, -1)]
            ids = tuple(str(describe_message(m).get("id")) for m in client.lrange(key, 0, -1))
            items.append(PendingWork("queued message(s)", f"redis queue {_text(key)!r}", count,
                                     detail="; ".join(shown), ids=ids))
    return items


def _is_scheduled(eta: Any, now: float) -> bool:
    try:
        return datetime.fromisoformat(str(eta)).timestamp() > now
    except ValueError:
        return False


@dataclass(frozen=True)
class RestoreCadence:
    """When kombu hands a dead worker's unacknowledged message out again: ``visibility`` seconds after
    its delivery, at the next restore sweep (every ``period`` seconds); ``configured``: jobquake set
    them (``[tool.jobquake.celery] broker_transport_options``), else kombu's defaults are assumed."""

    visibility: float
    period: float
    configured: bool

    def due(self, delivered: float | None, now: float) -> str:
        """When a message delivered at ``delivered`` comes back, in words."""
        setting = "as [tool.jobquake.celery] sets it" if self.configured else \
            "kombu's defaults: [tool.jobquake.celery] broker_transport_options scales them"
        when = "" if delivered is None else f", {max(0.0, delivered + self.visibility - now):.1f} s from now"
        return (f"if its worker died, back in its queue after visibility_timeout {self.visibility:g} s{when}, "
                f"at a restore sweep every {self.period:g} s ({setting})")


def unacked(client: Any, cadence: RestoreCadence | None = None) -> list[PendingWork]:
    """One item per message handed out and not acknowledged: running, reserved or scheduled."""
    entries = client.hgetall(UNACKED)
    now = time.time()
    items = []
    for tag, value in sorted(entries.items()):
        try:
            payload, _exchange, routing_key = json.loads(value)
        except (ValueError, TypeError):
            payload, routing_key = value, "?"
        info = describe_message(payload)
        since = client.zscore(UNACKED_INDEX, tag)
        scheduled = bool(info.get("eta")) and _is_scheduled(info["eta"], now)
        kind = "scheduled delivery" if scheduled else "unacknowledged message"
        restore = f"; {cadence.due(since, now)}" if cadence is not None and not scheduled else ""
        items.append(PendingWork(kind, f"redis {UNACKED!r} (routing key {_text(routing_key)!r}, held by a "
                                       f"worker or awaiting the restore sweep)",
                                 since=since, detail=_message_line(info) + f" tag={_text(tag)}{restore}",
                                 ids=(str(info.get("id")),)))
    return items


def read_redis_broker(client: Any, cadence: RestoreCadence | None = None) -> list[PendingWork]:
    """Everything the broker still holds: queued, then handed-out messages (with when each would come
    back from a dead worker, where ``cadence`` says)."""
    return queued(client) + unacked(client, cadence)


def purge_redis_broker(client: Any) -> int:
    """Delete every work queue (all priority steps) and the unacked bookkeeping; keys removed.

    Bindings stay: the workers' consumers keep routing to the same queues.
    """
    keys = [key for queue in work_queues(client) for key in queue_keys(queue)]
    keys += [UNACKED, UNACKED_INDEX, UNACKED_MUTEX]
    return int(client.delete(*keys))
