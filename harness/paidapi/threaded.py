"""Run the fake provider inside this process, on a thread with its own event loop.

For tests and for embedding; the stack runs it as ``python -m harness.paidapi``.
"""
from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any

from aiohttp import web

from harness.errors import ServiceError
from harness.paidapi.profile import LatencyProfile
from harness.paidapi.provider import Provider
from harness.paidapi.server import make_app

if TYPE_CHECKING:
    from harness.paidapi.control import PaidAPIControl

HOST = "127.0.0.1"
START_TIMEOUT = 10.0  # seconds
SHUTDOWN_TIMEOUT = 2.0  # seconds aiohttp waits for handlers after every call was answered


async def start_runner(provider: Provider, host: str, port: int,
                       token: str | None = None) -> tuple[web.AppRunner, int]:
    """Serve ``provider`` on host:port (0 picks a free port), its control routes needing ``token``
    when given; return the runner and port."""
    runner = web.AppRunner(
        make_app(provider, token), handler_cancellation=True, access_log=None,
        shutdown_timeout=SHUTDOWN_TIMEOUT,
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_port = runner.addresses[0][1]
    return runner, bound_port


class ThreadedPaidAPI:
    """The fake provider on a background thread; a context manager.

    >>> with ThreadedPaidAPI(time_scale=0.01, profile="fixed:1") as api:
    ...     httpx.post(f"{api.url}/v1/generate", json={"prompt": "hi"})
    """

    def __init__(self, *, host: str = HOST, port: int = 0, time_scale: float = 1.0,
                 seed: int | None = 0, profile: str = "default", token: str | None = None,
                 **settings: Any) -> None:
        self.host = host
        self.token = token  # the control routes' token (None: they answer anyone)
        self.port = port
        self.time_scale = time_scale
        self.seed = seed
        self.profile = LatencyProfile.named(profile)
        self.settings = settings  # prices, call_key, call_key_header (see Provider.configure)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL of the model and control routes."""
        return f"http://{self.host}:{self.port}"

    def control(self, **kwargs: Any) -> "PaidAPIControl":
        """A control client of this server, with its token."""
        from harness.paidapi.control import PaidAPIControl

        return PaidAPIControl(self.url, token=self.token, **kwargs)

    def start(self) -> None:
        """Start serving; return once the port is bound."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="paidapi", daemon=True)
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        try:
            self._runner, self.port = started.result(START_TIMEOUT)
        except Exception as exc:
            self._close_loop()
            raise ServiceError(f"could not start: {exc}", service="paidapi",
                               address=f"{self.host}:{self.port}") from exc

    async def _start(self) -> tuple[web.AppRunner, int]:
        provider = Provider(time_scale=self.time_scale, seed=self.seed, profile=self.profile)
        provider.configure(**self.settings)
        return await start_runner(provider, self.host, self.port, self.token)

    def stop(self) -> None:
        """Answer every open call 503, stop serving and end the thread. Idempotent."""
        if self._loop is None:
            return
        if self._runner is not None:
            cleanup = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
            cleanup.result(START_TIMEOUT + SHUTDOWN_TIMEOUT)
            self._runner = None
        self._close_loop()

    def _close_loop(self) -> None:
        assert self._loop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT)
        self._loop.close()
        self._loop = None

    def __enter__(self) -> ThreadedPaidAPI:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
