"""The reference app as a scenario sees it: its HTTP API, its status events, its tables.

Everything a scenario does to refapp goes through here, and everything that
matters to a verdict is recorded in the run's history as it happens:
submissions (invoke, then the HTTP answer: ok / fail, or info when the
answer was lost), and every status event the API streams to users.
"""
from __future__ import annotations

import json
import socket
import ssl
import threading
from typing import Any, Literal, cast, overload

import httpx
import psycopg
import redis

from harness import Run, wait_until
from harness.history import Record

TERMINAL = ("done", "failed", "needs_human")
# one for every client: building a context loads the CA bundle (~20 ms of CPU), and each scenario makes a client
_TLS = ssl.create_default_context()


class RefApp:
    """A client of refapp bound to one scenario's run (the ``jq`` fixture)."""

    def __init__(self, jq: Run):
        self.jq = jq
        self.url = jq.values["api_url"]
        self._bus: EventBus | None = None
        self.http = httpx.Client(base_url=self.url, timeout=10.0, verify=_TLS)
        self._events: EventStream | None = None

    # -- the API ---------------------------------------------------------------------
    @overload
    def submit(self, documents: list[str] | None = None, *, project: str = ..., file: str = ..., user: str = ...,
               route: str | None = None, expect: Literal[200, 201, 202] = 202, **extra: Any) -> str: ...
    @overload
    def submit(self, documents: list[str] | None = None, *, project: str = ..., file: str = ..., user: str = ...,
               route: str | None = None, expect: int | None, **extra: Any) -> str | None: ...

    def submit(self, documents: list[str] | None = None, *, project: str = "acme", file: str = "upload.pdf",
               user: str = "ana", route: str | None = None, expect: int | None = 202, **extra: Any) -> str | None:
        """POST /jobs as a user's browser would; return the job id of a 2xx answer.

        ``expect``: the status the answer must have (an assertion); a 2xx one
        means the id is there (typed ``str``), ``None`` asserts nothing.
        """
        body: dict[str, Any] = {"project": project, "file": file, "user": user, **extra}
        if documents is not None:
            body["documents"] = documents
        if route:
            body["route"] = route
        record = self.jq.record
        record.submitting(project=project, file=file)
        try:
            answer = self.http.post("/jobs", json=body)
        except httpx.HTTPError as exc:
            record.submission(None, accepted=None, error=repr(exc), project=project, file=file)  # the answer was lost
            raise
        job_id = answer.json().get("job_id") if answer.is_success else None
        if answer.is_success:  # every answer names its upload: each pairs with its request
            record.submission(job_id, status=answer.status_code, project=project, file=file)
        else:
            record.submission(None, accepted=False, error=f"HTTP {answer.status_code}", status=answer.status_code,
                              project=project, file=file)
        if expect is not None:
            assert answer.status_code == expect, f"POST /jobs answered {answer.status_code}: {answer.text}"
        return job_id

    def job(self, job_id: str) -> dict[str, Any]:
        """GET /jobs/{id}: what the user's screen shows after a refresh."""
        answer = self.http.get(f"/jobs/{job_id}")
        answer.raise_for_status()
        return cast("dict[str, Any]", answer.json())

    def cancel(self, job_id: str) -> str:
        """POST /jobs/{id}/cancel, as the user's "stop" button: the state the API answers with."""
        answer = self.http.post(f"/jobs/{job_id}/cancel")
        answer.raise_for_status()
        return str(answer.json()["state"])

    def wait_for(self, job_id: str, *states: str, timeout: float = 20.0) -> dict[str, Any]:
        """Poll the job until it is in one of ``states`` (default: any terminal state).

        Waiting for terminal states only, the polls back off: such a state stays once reached.
        """
        wanted = states or TERMINAL
        lasting = set(wanted) <= set(TERMINAL)
        return wait_until(lambda: (j := self.job(job_id))["state"] in wanted and j,
                          timeout=timeout, lasting=lasting, what=f"job {job_id} in {wanted}")

    def run_sweep(self) -> dict[str, Any]:
        """POST /sweeps/overdue: run the overdue-invoice sweep now."""
        answer = self.http.post("/sweeps/overdue")
        answer.raise_for_status()
        return cast("dict[str, Any]", answer.json())

    # -- the database (read-only, direct, never through the fault proxy) ---------------
    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.jq.database_dsn, autocommit=True, connect_timeout=5) as conn:
            return conn.execute(sql, params).fetchall()

    def execute(self, sql: str, *params: Any) -> None:
        with psycopg.connect(self.jq.database_dsn, autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql, params)

    # -- status events -------------------------------------------------------------------
    def listen(self) -> "EventStream":
        """Subscribe to GET /events (every job's status events) for the rest of the scenario."""
        if self._events is None:
            self._events = EventStream(self.url, self.jq.record)
            self._events.start()
        return self._events

    def listen_to_the_bus(self) -> "EventBus":
        """Subscribe to the status events as refapp publishes them, before a stream drops any as stale:
        what every subscriber of its event channel (a notifier, a webhook sender) is told."""
        if self._bus is None:
            self._bus = EventBus(self.jq.values["redis_url"], self.jq.record)
        return self._bus

    def close(self) -> None:
        if self._events is not None:
            self._events.stop()
        if self._bus is not None:
            self._bus.stop()
        self.http.close()


class EventStream:
    """Server-sent events read in a thread and recorded as status events (``jq.record.status_event``).

    A plain socket speaking HTTP/1.0 (so the body is not chunked): ``stop()``
    shuts the socket down, which ends the blocking read at once and lets the
    API shut down without waiting for a client that will never leave.
    """

    def __init__(self, url: str, record: Record):
        self.url = url
        self.record = record
        self.received: list[dict[str, Any]] = []
        self._stopping = False
        host, port = url.split("://", 1)[1].split(":")
        self._sock = socket.create_connection((host, int(port)), timeout=10)
        self._thread = threading.Thread(target=self._read, name="refapp-events", daemon=True)

    def start(self) -> None:
        self._sock.sendall(b"GET /events HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n")
        reader = self._sock.makefile("rb")
        status = reader.readline()
        if b" 200 " not in status:
            raise RuntimeError(f"{self.url}/events answered {status!r}")
        while reader.readline().strip():  # headers
            pass
        self._reader = reader
        self._sock.settimeout(None)
        self._thread.start()

    def _read(self) -> None:
        try:
            for raw in self._reader:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("data: "):
                    self._record(json.loads(line[len("data: "):]))
        except (OSError, ValueError):
            pass
        if not self._stopping:
            self.record.status_stream_lost()

    def _record(self, event: dict[str, Any]) -> None:
        self.received.append(event)
        self.record.status_event(event.get("job_id"), event.get("state"), attempt=event.get("attempt"),
                                 reason=event.get("reason"))

    def states(self, job_id: str) -> list[str]:
        return [e["state"] for e in self.received if e.get("job_id") == job_id]

    def stop(self) -> None:
        self._stopping = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join(5)
        self._sock.close()


class EventBus:
    """refapp's event channel (Redis pub/sub) read in a thread, each event recorded as a status event."""

    def __init__(self, redis_url: str, record: Record):
        from refapp.events import CHANNEL

        self.record = record
        self.received: list[dict[str, Any]] = []
        self._stopping = threading.Event()
        self._pubsub = redis.Redis.from_url(redis_url).pubsub(ignore_subscribe_messages=True)
        self._pubsub.subscribe(CHANNEL)
        self._thread = threading.Thread(target=self._read, name="refapp-bus", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stopping.is_set():
            try:
                message = self._pubsub.get_message(timeout=0.2)
            except redis.RedisError:
                if not self._stopping.is_set():
                    self.record.status_stream_lost()
                return
            if message and message.get("type") == "message":
                event = json.loads(message["data"])
                self.received.append(event)
                self.record.status_event(event.get("job_id"), event.get("state"), attempt=event.get("attempt"),
                                         reason=event.get("reason"))

    def states(self, job_id: str) -> list[str]:
        return [e["state"] for e in list(self.received) if e.get("job_id") == job_id]

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(5)
        self._pubsub.close()
