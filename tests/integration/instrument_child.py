"""A process the instrumentation is loaded into, as the harness would start it (no jobquake import).

It serves a tiny "paid API" that records the headers it receives, runs
Celery tasks eagerly (the same task_prerun / task_postrun signals as in a
worker), makes the calls named on the command line, and prints what the
server saw as JSON: ``python instrument_child.py httpx requests ...``.
"""
import asyncio
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

seen = []


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items() if k.lower().startswith("x-")}})
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", int(os.environ["CHILD_PORT"])), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
paid = f"http://127.0.0.1:{server.server_port}"

import aiohttp  # noqa: E402 - imported after the server, as an app would import late
import httpx  # noqa: E402
import requests  # noqa: E402
from celery import Celery  # noqa: E402

app = Celery("child")
app.conf.task_always_eager = True


def by_httpx(url):
    httpx.post(url, json={})


async def _by_async_httpx(url):
    async with httpx.AsyncClient() as client:
        await client.post(url, json={})


async def _by_aiohttp(url):
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json={}) as response:
            await response.read()


CLIENTS = {
    "httpx": by_httpx,
    "async_httpx": lambda url: asyncio.run(_by_async_httpx(url)),
    "requests": lambda url: requests.post(url, json={}),
    "aiohttp": lambda url: asyncio.run(_by_aiohttp(url)),
    "own_header": lambda url: httpx.post(url, json={}, headers={"X-Job-Id": "mine"}),
}


@app.task(name="child.work")
def work(item_id, client, path="/v1/generate", extra=None):
    CLIENTS[client](paid + path)


if __name__ == "__main__":
    for spec in sys.argv[1:]:
        client, _, rest = spec.partition("@")
        item = rest or "item-1"
        work.delay(item, client)
    httpx.post("http://127.0.0.1:%d/v1/outside" % server.server_port, json={})  # no task running
    print(json.dumps({"pid": os.getpid(), "seen": seen}))
