"""The harness's status stream reader: what it records, when it reconnects, what it sends back."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness._wait import wait_until
from harness.history import vocabulary as v
from harness.streams.reader import StreamError, StreamReader

TERMINAL = ("done", "failed", "needs_human")


class Server:
    """An SSE server on loopback: each connection gets the next script of events, then the stream ends."""

    def __init__(self, scripts: list[list[tuple[str, dict]]], status: int = 200):
        self.scripts, self.status, self.seen_ids = list(scripts), status, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                outer.seen_ids.append(self.headers.get("Last-Event-ID"))
                self.send_response(outer.status)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event_id, data in outer.scripts.pop(0) if outer.scripts else []:
                    self.wfile.write(f"event: job\nid: {event_id}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/events"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def recorded():
    events: list[tuple[str, str, str, dict]] = []

    def record(source, type_, name, job_id=None, attempt=None, data=None):
        events.append((source, type_, name, {"job_id": job_id, "attempt": attempt, **(data or {})}))
    return events, record


def test_a_jobs_stream_is_recorded_and_not_reopened_once_it_told_the_end(recorded):
    events, record = recorded
    server = Server([[("1.0", {"job_id": "j1", "state": "running", "attempt": 1}),
                      ("2.0", {"job_id": "j1", "state": "done", "attempt": 1})]])
    reader = StreamReader("job-j1", server.url, record=record, terminal_states=TERMINAL, job_id="j1").start()
    wait_until(lambda: any(e[2] == v.STREAM_CLOSED for e in events), timeout=5, what="the stream to end")
    reader.stop()
    server.close()

    told = [(e[3]["state"], e[3]["attempt"], e[3]["event_id"]) for e in events if e[2] == v.STATUS]
    assert told == [("running", 1, "1.0"), ("done", 1, "2.0")]
    assert [e[3]["by"] for e in events if e[2] == v.STREAM_CLOSED] == ["server"]
    assert server.seen_ids == [None]  # told its job's end: not opened again


def test_a_stream_the_server_ends_is_reopened_with_the_last_event_id(recorded):
    events, record = recorded
    server = Server([[("1.0", {"job_id": "j1", "state": "running", "attempt": 1})],
                     [("2.0", {"job_id": "j1", "state": "done", "attempt": 1})]])
    reader = StreamReader("all-jobs", server.url, record=record, terminal_states=TERMINAL, retry=0.01).start()
    wait_until(lambda: reader.told.last.get("j1") == ("done", 1), timeout=5, what="the second connection's event")
    reader.stop()
    server.close()

    assert server.seen_ids[:2] == [None, "1.0"]
    opened = [e[3] for e in events if e[2] == v.STREAM_OPENED]
    assert [(o["reconnect"], o["last_event_id"]) for o in opened][:2] == [(False, None), (True, "1.0")]


def test_a_server_that_answers_no_stream_is_an_error_naming_it(recorded):
    _, record = recorded
    server = Server([], status=404)
    with pytest.raises(StreamError, match=r"status stream http://127\.0\.0\.1:\d+/events answered .*404"):
        StreamReader("all-jobs", server.url, record=record, terminal_states=TERMINAL).start()
    server.close()
