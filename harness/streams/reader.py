"""One status stream (server-sent events), read the way a browser's EventSource reads it, into the history.

The reader connects, records every event it is told as a ``event ok
status`` (job, state, attempt, ``stream``: its name, ``event_id``), and when
the server ends the stream it records how (``event info stream_closed``)
and connects again after ``retry`` seconds, sending the last event id it
got as ``Last-Event-ID``, as EventSource does. A one-job stream that told
its job's terminal state is over and is not reopened.

Plain HTTP/1.0 over a socket (the body then ends with the connection, never
chunked): ``stop()`` shuts the socket down, which ends a blocking read at
once, so a stream never holds up the server's shutdown or the verdict.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

from harness.errors import HarnessError
from harness.history import vocabulary as v

__all__ = ["Fields", "StreamError", "StreamReader", "Told"]

CONNECT_TIMEOUT = 10.0
MAX_RETRY = 1.0  # seconds between reconnects at most, however long the server stays away


class StreamError(HarnessError):
    """A status stream could not be opened (the server refused, answered something else, or was not there)."""


@dataclass(frozen=True)
class Fields:
    """Where an event's job id, state and attempt are, in its JSON ``data``."""

    job_id: str = "job_id"
    state: str = "state"
    attempt: str = "attempt"


@dataclass
class Told:
    """What a stream told so far: per job its last (state, attempt), and whether any was terminal."""

    last: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    events: int = 0
    terminal: bool = False


class StreamReader:
    """A thread reading one SSE stream into the history (``record(source, type, name, **kw)``)."""

    def __init__(self, name: str, url: str, *, record: Callable[..., Any], terminal_states: tuple[str, ...],
                 job_id: str | None = None, fields: Fields = Fields(), retry: float = 0.2):
        self.name, self.url, self.job_id = name, url, job_id
        self._record, self.terminal_states, self.fields, self.retry = record, terminal_states, fields, retry
        self.told = Told()
        self.last_id: str | None = None
        self.opened_at: float | None = None  # monotonic time of the first connection
        self.connected = False
        self._sock: socket.socket | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"stream {name}", daemon=True)

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> "StreamReader":
        """Connect (StreamError when the server does not answer 200 with a stream), then read in a thread."""
        self._reader = self._connect(reconnect=False)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop reading (recorded as closed by the client); idempotent."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._shutdown()
        self._thread.join(5)
        if self.connected:
            self.connected = False
            self._closed("client", None)

    # -- the connection ---------------------------------------------------------------
    def _connect(self, *, reconnect: bool) -> Any:
        parts = urlsplit(self.url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = [f"GET {path} HTTP/1.0", f"Host: {parts.netloc}", "Accept: text/event-stream",
                   "Cache-Control: no-cache"] + ([f"Last-Event-ID: {self.last_id}"] if self.last_id else [])
        try:
            sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=CONNECT_TIMEOUT)
            sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
            reader = sock.makefile("rb")
            status = reader.readline()
            while reader.readline().strip():  # the response's headers
                pass
        except OSError as exc:
            raise StreamError(f"status stream {self.url}: {exc}") from exc
        if b" 200 " not in status:
            sock.close()
            raise StreamError(f"status stream {self.url} answered {status.decode(errors='replace').strip()!r}, "
                              f"not 200 with an event stream")
        sock.settimeout(None)
        self._sock, self.connected = sock, True
        self.opened_at = self.opened_at or time.monotonic()
        self._record(v.EVENT, "ok", v.STREAM_OPENED, job_id=self.job_id,
                     data={"stream": self.name, "url": self.url, "job_id": self.job_id, "reconnect": reconnect,
                           "last_event_id": self.last_id})
        return reader

    def _shutdown(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _run(self) -> None:
        reader = self._reader
        while reader is not None and not self._stopping.is_set():
            error = self._read(reader)
            if self._stopping.is_set():
                return
            self.connected = False
            self._shutdown()
            self._closed("error" if error else "server", error)
            if self.job_id is not None and self.told.terminal:
                return  # a one-job stream is over once it told its job's end
            reader = self._reconnect()

    def _reconnect(self) -> Any:
        wait = self.retry
        while not self._stopping.wait(wait):
            try:
                return self._connect(reconnect=True)
            except StreamError:
                wait = min(wait * 2, MAX_RETRY)
        return None

    def _closed(self, by: str, error: str | None) -> None:
        self._record(v.EVENT, "info", v.STREAM_CLOSED, job_id=self.job_id,
                     data={"stream": self.name, "by": by, "error": error, "told_terminal": self.told.terminal})

    # -- the events -------------------------------------------------------------------
    def _read(self, reader: Any) -> str | None:
        """Read events until the stream ends; the error that ended it, None for a clean end."""
        data: list[str] = []
        event_id = None
        try:
            for raw in reader:
                line = raw.decode(errors="replace").rstrip("\r\n")
                if line.startswith("id:"):
                    event_id = line[3:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
                elif not line and data:
                    self._tell("\n".join(data), event_id)
                    data, event_id = [], None
        except (OSError, ValueError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    def _tell(self, text: str, event_id: str | None) -> None:
        try:
            event = json.loads(text)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if event_id is not None:
            self.last_id = event_id
        job_id = event.get(self.fields.job_id, self.job_id)
        state, attempt = event.get(self.fields.state), event.get(self.fields.attempt)
        self.told.last[str(job_id)] = (state, attempt)
        self.told.events += 1
        self.told.terminal = self.told.terminal or (self.job_id is not None and state in self.terminal_states)
        self._record(v.EVENT, "ok", v.STATUS, job_id=None if job_id is None else str(job_id),
                     attempt=attempt if isinstance(attempt, int) else None,
                     data={"state": state, "stream": self.name, "event_id": event_id, "reason": event.get("reason")})
