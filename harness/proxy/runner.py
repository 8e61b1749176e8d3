"""Running the proxy: its API on a loopback port, in the caller's loop or in a thread.

``python -m harness.proxy`` (what the harness starts) uses ``start_api`` and
``shutdown`` in its own loop; ``ProxyServer`` runs the same thing on a
private loop in a background thread, for tests and benchmarks.
"""
from __future__ import annotations

import asyncio
import socket
import threading
from types import TracebackType

from aiohttp import web

from harness.proxy.api import build_app
from harness.proxy.fields import join_address, loopback_listen
from harness.proxy.server import ProxyCollection

SHUTDOWN_GRACE = 2.0  # seconds for in-flight requests and connections to end


async def start_api(proxies: ProxyCollection, host: str, port: int, *, sock: socket.socket | None = None,
                    token: str | None = None) -> tuple[web.AppRunner, int]:
    """Serve the API for ``proxies`` on host:port (loopback only), or on ``sock``, a listening socket
    bound there by the caller; requests need ``token`` when given. Return the runner and port."""
    loopback_listen(join_address(host, port))  # raises ApiError off loopback
    runner = web.AppRunner(build_app(proxies, token), access_log=None, shutdown_timeout=SHUTDOWN_GRACE)
    await runner.setup()
    site = web.SockSite(runner, sock) if sock is not None else web.TCPSite(runner, host, port)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner, runner.addresses[0][1]


async def shutdown(runner: web.AppRunner, proxies: ProxyCollection) -> None:
    """Stop the API, drop every proxy connection, and let their tasks end."""
    await runner.cleanup()
    await proxies.close()
    others = asyncio.all_tasks() - {asyncio.current_task()}
    if others:
        _, pending = await asyncio.wait(others, timeout=SHUTDOWN_GRACE)
        for task in pending:
            task.cancel()


class ProxyServer:
    """The embedded proxy and its HTTP API on a private event loop in a background thread."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, seed: int = 0, token: str | None = None):
        self.host = host
        self.port = port  # the real port once started
        self.seed = seed
        self.token = token  # the API's token (None: it answers anyone)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{join_address(self.host, self.port)}"

    def start(self, timeout: float = 10.0) -> ProxyServer:
        """Start the thread; return once the API accepts requests."""
        self._thread = threading.Thread(target=self._run, name=f"jobquake-proxy-{self.port}", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"embedded proxy API on {self.host}:{self.port} not up within {timeout}s")
        if self._error is not None:
            self._thread.join(timeout)
            raise self._error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the API and every proxy; idempotent."""
        if self._thread is None:
            return
        if self._loop is not None and self._stopping is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._stopping.set)
            except RuntimeError:
                pass  # the loop already ended
        self._thread.join(timeout)
        self._thread = None

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        finally:
            loop.close()

    async def _serve(self) -> None:
        proxies = ProxyCollection(self.seed)
        self._stopping = asyncio.Event()
        try:
            runner, self.port = await start_api(proxies, self.host, self.port, token=self.token)
        except BaseException as exc:  # reported to the thread that called start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        await self._stopping.wait()
        await shutdown(runner, proxies)
