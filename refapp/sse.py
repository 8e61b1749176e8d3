"""Server-sent status streams: one job's (``GET /jobs/{id}/events``) and every job's (``GET /events``).

A stream subscribes to the status events before it reads the database, so
no change falls between the two, and it forwards each event newer than what
it sent for that job (``streams.SentStates``). Events are only news: one can
be lost (Redis away while a worker publishes, a publisher killed between its
commit and its publish) and nothing would ever repeat it. So every
``stream_recheck`` a stream also catches up from the database itself: a
one-job stream reads its job, the all-jobs stream every job changed since
its last look. A late event costs a stream that long, never the final state.

Each event carries an ``id:`` (when its change happened, epoch seconds). A
dashboard that reconnects sends the last one back (``Last-Event-ID``, as a
browser's EventSource does) and is caught up on every job that changed
since, before anything new.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from aiohttp import web

from refapp import budgets, jobstatus
from refapp.attempt import QUEUED, TERMINAL
from refapp.event_hub import EventHub
from refapp.mutants import mutant
from refapp.streams import SentStates

log = logging.getLogger("refapp.api")

KEEPALIVE = 15.0  # seconds between SSE comments on a quiet stream, so proxies keep it open


async def serve(request: web.Request, hub: EventHub, job_id: str | None) -> web.StreamResponse:
    """Stream the status of ``job_id`` (None: of every job) until it ends or the client leaves."""
    queue = hub.subscribe()  # before the first read, so no change falls between the two
    try:
        stream = Stream(request, SentStates(job_id))
        first = await asyncio.to_thread(jobstatus.state_event, job_id) if job_id else None
        if job_id and first is None:
            return web.json_response({"error": "no such job"}, status=404)
        await stream.open()
        if first is not None:
            if await stream.send({**first, "snapshot": True}):
                return stream.response
        elif (resume := _resume_point(request)) is not None:
            # a dashboard back from a break: first what it missed
            if not mutant("all-events-ignores-last-event-id") and await stream.catch_up(since=resume):
                return stream.response
        await stream.follow(queue)
        return stream.response
    finally:
        hub.unsubscribe(queue)


def _resume_point(request: web.Request) -> float | None:
    """The moment a reconnecting client last heard of (its ``Last-Event-ID``), if it sent one."""
    try:
        return float(request.headers["Last-Event-ID"])
    except (KeyError, ValueError):
        return None


class Stream:
    """One open SSE response and what it sent."""

    def __init__(self, request: web.Request, sent: SentStates):
        self.request = request
        self.sent = sent
        self.response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        self.recheck = budgets.scaled("stream_recheck")
        self.looked_at = time.time()  # the all-jobs stream catches up on changes from here on
        self.written = time.monotonic()

    async def open(self) -> None:
        await self.response.prepare(self.request)

    async def follow(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        """Forward events, catching up from the database every ``recheck``, until the stream is over."""
        next_check = time.monotonic() + self.recheck
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), max(0.0, next_check - time.monotonic()))
            except TimeoutError:
                event = None
            if event is not None and await self.forward(event):
                return
            if time.monotonic() >= next_check:
                next_check = time.monotonic() + self.recheck
                if await self.catch_up():
                    return
            if time.monotonic() - self.written >= KEEPALIVE:
                await self.response.write(b": keepalive\n\n")
                self.written = time.monotonic()

    async def forward(self, event: dict[str, Any]) -> bool:
        """Send a published event if it is news to this stream; True when the stream is over."""
        if not self.sent.follows(event) or self.sent.repeats(event):
            return False
        # late news (an older attempt's "queued" after the next attempt's "running") would show the job
        # going backwards; the wrong shape forwards it all the same
        if self.sent.older(event) and not mutant("stream-forwards-stale-event"):
            return False
        return await self.send(event)

    async def catch_up(self, since: float | None = None) -> bool:
        """Send the database's state of each job that moved on without this stream hearing of it."""
        if self.sent.job_id is not None:
            found = await asyncio.to_thread(jobstatus.state_event, self.sent.job_id)
            rows = [] if found is None else [found]
        else:
            start = self.looked_at if since is None else since
            self.looked_at = time.time()
            rows = await asyncio.to_thread(jobstatus.states_since, start - budgets.scaled("stream_overlap"))
        for row in rows:
            if self.sent.repeats(row) or self.sent.older(row):
                continue
            # the database is ahead of what this stream sent: an event was lost, or is still on its way
            if mutant("stream-trusts-events"):
                continue  # the wrong shape: only events are news, so a lost one is never made up for
            if (self.sent.job_id is None and row["state"] in TERMINAL
                    and mutant("dashboard-reconciles-active-only")):
                continue  # the wrong shape: "a dashboard only needs the jobs still in progress"
            if await self.send(row):
                return True
        return False

    async def send(self, event: dict[str, Any]) -> bool:
        """Write one event; True when it ends a one-job stream (its terminal state, or the wrong shape's)."""
        self.sent.note(event)
        data = json.dumps(event)
        await self.response.write(f"event: job\nid: {event.get('at', time.time())}\ndata: {data}\n\n".encode())
        self.written = time.monotonic()
        if self.sent.ends(event):
            return True
        # a job given back to the queue is not finished: its next attempt is coming; the wrong shape ends
        # the stream once the job is "no longer running", as if the attempt's end were the job's
        return bool(self.sent.job_id is not None and event.get("state") == QUEUED and event.get("attempt")
                    and mutant("stream-ends-on-requeue"))
