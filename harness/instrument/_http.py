"""HTTP clients: paid calls go to the fake paid API, tagged with the job, attempt and pid of their code.

Patched where every request of each library passes: httpx's transports
(what the official anthropic client uses) and those of its fork httpx2
(what the official openai client uses from version 3, same classes), requests'
``Session.send``, aiohttp's ``ClientSession._request``. A call is paid when
``_routes.Routes`` says so: its URL is the paid API's, or a model
provider's public address, which is rewritten to the paid API's. Each paid
call carries the timeout its client set (``_timeouts.py``), scaled where
config lists it. Headers the app set itself win.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Callable

from harness.instrument import (HEADER_APP_TIMEOUT, HEADER_ATTEMPT, HEADER_JOB, HEADER_PID, HEADER_ROUTED,
                                HEADER_TIMEOUT, _context)
from harness.instrument._fire import fire
from harness.instrument._routes import Routes
from harness.instrument._timeouts import TimeoutPolicy, header

PATCHED = "_jobquake_patched"
_UNSET = object()


class PaidCalls:
    """Which URLs are paid calls, where they go, and the headers to give them."""

    def __init__(self, paidapi_url: str, routes: Routes | None = None, timeouts: TimeoutPolicy | None = None):
        self.routes = routes or Routes(paidapi_url)
        self.prefixes = self.routes.paidapi
        self.timeouts = timeouts or TimeoutPolicy()

    def is_paid(self, url: Any) -> bool:
        return self.routes.target(url) is not None

    def headers(self) -> dict[str, str]:
        tags = {HEADER_PID: str(os.getpid())}
        job = _context.current()
        if job is not None and job.job_id is not None:
            tags[HEADER_JOB] = job.job_id
            if job.attempt is not None:
                tags[HEADER_ATTEMPT] = str(job.attempt)
        return tags

    def before(self, url: Any, method: str, existing: Any, *, routed_from: str | None = None,
               timeout: tuple[Any, Any] | None = None) -> dict[str, str]:
        """The headers to add to a paid call (none the app already set); fires the failpoint.

        ``timeout``: (as the app asked, as sent), when the library's timeout could be read.
        """
        fire("http.before_paid_call", url=str(url), method=method)
        present = {k.lower() for k in existing.keys()} if existing else set()
        tags = self.headers()
        if routed_from is not None:
            tags[HEADER_ROUTED] = routed_from
        if timeout is not None:
            asked, sent = timeout
            tags[HEADER_TIMEOUT] = header(sent)
            if sent != asked:
                tags[HEADER_APP_TIMEOUT] = header(asked)
        return {k: v for k, v in tags.items() if k.lower() not in present}

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
        called = str(request.url)
        target = self.routes.target(called)
        if target is None:
            return
        if target != called:
            request.url = type(request.url)(target)
            request.headers["Host"] = request.url.netloc.decode()
        new, asked, sent = self.timeouts.httpx(request.extensions.get("timeout"))
        if isinstance(new, dict):
            request.extensions["timeout"] = new
        tags = self.before(request.url, request.method, request.headers, routed_from=_routed(called, target),
                           timeout=(asked, sent) if isinstance(new, dict) else None)
        for key, value in tags.items():
            request.headers[key] = value

    def patch_requests(self, requests: Any) -> None:
        def wrap(original: Callable) -> Callable:
            @functools.wraps(original)
            def send(session: Any, request: Any, **kwargs: Any) -> Any:
                called = str(request.url)
                target = self.routes.target(called)
                if target is not None:
                    request.url = target
                    kwargs["timeout"], asked, sent = self.timeouts.requests(kwargs.get("timeout"))
                    request.headers.update(self.before(target, request.method, request.headers,
                                                       routed_from=_routed(called, target), timeout=(asked, sent)))
                return original(session, request, **kwargs)
            return send

        _wrap(requests.Session, "send", wrap)

    def patch_aiohttp(self, aiohttp: Any) -> None:
        def wrap(original: Callable) -> Callable:
            @functools.wraps(original)
            async def _request(session: Any, method: str, str_or_url: Any, **kwargs: Any) -> Any:
                called = _absolute(session, str_or_url)
                target = self.routes.target(called)
                if target is not None:
                    str_or_url = target
                    given = kwargs.get("timeout", _UNSET)
                    # aiohttp's default is a sentinel meaning "the session's"; None means no timeout
                    chosen = getattr(session, "timeout", None) if given is _UNSET or \
                        type(given).__name__ == "_SENTINEL" else given
                    new, asked, sent = self.timeouts.aiohttp(chosen)
                    if new is not chosen:
                        kwargs["timeout"] = new
                    read = (asked, sent) if chosen is None or asked is not None or sent is not None else None
                    given_headers = dict(kwargs.get("headers") or {})
                    merged = {**{k: v for k, v in (session.headers or {}).items()}, **given_headers}
                    kwargs["headers"] = {**given_headers, **self.before(
                        target, method, merged, routed_from=_routed(called, target), timeout=read)}
                return await original(session, method, str_or_url, **kwargs)
            return _request

        _wrap(aiohttp.ClientSession, "_request", wrap)


def _routed(called: str, target: str) -> str | None:
    return None if called == target else called


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
