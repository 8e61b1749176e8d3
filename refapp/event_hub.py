"""Fan-out of the Redis status channel to the API's server-sent-event streams."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import redis.asyncio as aioredis

from refapp.events import CHANNEL, decode

log = logging.getLogger(__name__)

QUEUE_SIZE = 1000  # events a slow client may lag behind before it misses some
RECONNECT = 1.0  # seconds between attempts to resubscribe after Redis went away


class EventHub:
    """One Redis subscription, many listeners (each an asyncio.Queue of event dicts)."""

    def __init__(self, url: str):
        self.url = url
        self._listeners: set[asyncio.Queue[dict[str, Any]]] = set()
        self._task: asyncio.Task[None] | None = None

    def subscribe(self) -> asyncio.Queue[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_SIZE)
        self._listeners.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self._listeners.discard(queue)

    def deliver(self, event: dict[str, Any]) -> None:
        for queue in list(self._listeners):
            with contextlib.suppress(asyncio.QueueFull):  # a stuck client loses events, not the hub
                queue.put_nowait(event)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _listen(self) -> None:
        while True:
            try:
                async with aioredis.from_url(self.url) as client, client.pubsub() as pubsub:
                    await pubsub.subscribe(CHANNEL)
                    async for message in pubsub.listen():
                        if message.get("type") == "message" and (event := decode(message["data"])):
                            self.deliver(event)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis went away: resubscribe
                log.warning("event channel lost (%s); resubscribing", exc)
                await asyncio.sleep(RECONNECT)
