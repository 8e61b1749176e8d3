"""HTTP clients: calls to the paid API carry the job, attempt and pid of the code that makes them.

Patched where every request of each library passes: httpx's transports
(what the official anthropic client uses) and those of its fork httpx2
(what the official openai client uses from version 3, same classes), requests'
``Session.send``, aiohttp's ``ClientSession._request``. Only URLs that start
with the paid API's URL are touched; headers the app set itself win.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Callable

from harness.instrument import HEADER_ATTEMPT, HEADER_JOB, HEADER_PID, _context
from harness.instrument._fire import fire

PATCHED = "_jobquake_patched"


class PaidCalls:
    """Which URLs are paid calls, and the headers to give them."""

    def __init__(self, paidapi_url: str):
        self.prefixes = tuple(u.rstrip("/") for u in paidapi_url.split() if u)

    def is_paid(self, url: Any) -> bool:
        return bool(self.prefixes) and str(url).startswith(self.prefixes)

    def headers(self) -> dict[str, str]:
        tags = {HEADER_PID: str(os.getpid())}
        job = _context.current()
        if job is not None and job.job_id is not None:
            tags[HEADER_JOB] = job.job_id
            if job.attempt is not None:
                tags[HEADER_ATTEMPT] = str(job.attempt)
        return tags

    def before(self, url: Any, method: str, existing: Any) -> dict[str, str]:
        """The headers to add to a paid call (none the app already set); fires the failpoint."""
        fire("http.before_paid_call", url=str(url), method=method)
        present = {k.lower() for k in existing.keys()} if existing else set()
        return {k: v for k, v in self.headers().items() if k.lower() not in present}

    # -- the libraries -------------------------------------------------------------
    def patch_httpx(self, httpx: Any) -> None:
        def sync(original: Callable) -> Callable:
            @functools.wraps(original)
            def handle_request(transport: Any, request: Any) -> Any:
                self._tag_httpx(request)
                return original(transport, request)
            return handle_request

        def asynchronous(original: Callable) -> Callable:
            @functools.wraps(original)
            async def handle_async_request(transport: Any, request: Any) -> Any:
                self._tag_httpx(request)
                return await original(transport, request)
            return handle_async_request

        _wrap(httpx.HTTPTransport, "handle_request", sync)
        _wrap(httpx.AsyncHTTPTransport, "handle_async_request", asynchronous)

    def _tag_httpx(self, request: Any) -> None:
        if self.is_paid(request.url):
            for key, value in self.before(request.url, request.method, request.headers).items():
                request.headers[key] = value

    def patch_requests(self, requests: Any) -> None:
        def wrap(original: Callable) -> Callable:
            @functools.wraps(original)
            def send(session: Any, request: Any, **kwargs: Any) -> Any:
                if self.is_paid(request.url):
                    request.headers.update(self.before(request.url, request.method, request.headers))
                return original(session, request, **kwargs)
            return send

        _wrap(requests.Session, "send", wrap)

    def patch_aiohttp(self, aiohttp: Any) -> None:
        def wrap(original: Callable) -> Callable:
            @functools.wraps(original)
            async def _request(session: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
                url = _absolute(session, str_or_url)
                if self.is_paid(url):
                    given = dict(kwargs.get("headers") or {})
                    merged = {**{k: v for k, v in (session.headers or {}).items()}, **given}
                    kwargs["headers"] = {**given, **self.before(url, method, merged)}
                return await original(session, method, str_or_url, **kwargs)
            return _request

        _wrap(aiohttp.ClientSession, "_request", wrap)


def _absolute(session: Any, str_or_url: Any) -> str:
    """The URL aiohttp will call: relative ones are joined to the session's ``base_url``."""
    target, base = str(str_or_url), getattr(session, "_base_url", None)
    if base is None or target.startswith(("http://", "https://")):
        return target
    return str(base.join(type(base)(target)))


def _wrap(cls: type, name: str, wrapper: Callable[[Callable], Callable]) -> None:
    original = getattr(cls, name)
    if getattr(original, PATCHED, False):
        return
    patched = wrapper(original)
    setattr(patched, PATCHED, True)
    setattr(cls, name, patched)
