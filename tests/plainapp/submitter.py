"""The plain app's front door: ``POST /submit/<item_id>`` writes the item, enqueues its task, marks it queued.

Standard library HTTP server; nothing from jobquake. The write and the
enqueue are two steps, as in most apps: whatever fails after the write
leaves a row the queue never heard of, or an enqueued task whose row says
``new``.
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sqlalchemy import text

from plainapp import engine, with_httpx


class Submit(BaseHTTPRequestHandler):
    def do_GET(self):
        self._answer(200 if self.path == "/health" else 404, "ok")

    def do_POST(self):
        item_id = self.path.rsplit("/", 1)[-1]
        try:
            with engine().begin() as conn:
                conn.execute(text("INSERT INTO work_items (item_id, status) VALUES (:id, 'new')"), {"id": item_id})
            with_httpx.delay(item_id)
            with engine().begin() as conn:
                conn.execute(text("UPDATE work_items SET status = 'queued' WHERE item_id = :id AND status = 'new'"),
                             {"id": item_id})
        except Exception as exc:  # noqa: BLE001 - the client sees why
            self._answer(500, f"{type(exc).__name__}: {exc}")
            return
        self._answer(202, item_id)

    def _answer(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Submit).serve_forever()
