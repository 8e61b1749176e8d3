"""JSON plumbing shared by the model route and the control API."""
from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from aiohttp import web

from harness.errors import ConfigError
from harness.paidapi.provider import Provider

log = logging.getLogger("harness.paidapi")

PROVIDER = web.AppKey("provider", Provider)
TOKEN = web.AppKey("token", str)  # the session's control token (None: the control API is open)
REFUSED = web.AppKey("refused", list)  # the control requests refused for want of it, as "METHOD path from peer"


@web.middleware
async def config_errors_as_400(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Answer bad input (a ConfigError anywhere in a handler) with 400 ``{"error": ...}``."""
    try:
        return await handler(request)
    except ConfigError as exc:
        log.warning("400 %s %s: %s", request.method, request.path, exc)
        return web.json_response({"error": str(exc)}, status=400)


async def json_body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object; ``{}`` when there is no body (may be called again: aiohttp
    keeps the bytes read)."""
    if not request.body_exists:
        return {}
    try:
        body = await request.json()
    except ValueError as exc:
        raise ConfigError(f"the body is not JSON: {exc}", key="body") from exc
    if not isinstance(body, dict):
        raise ConfigError("the body must be a JSON object", key="body")
    return body


def query_number(query: Any, name: str, kind: type) -> Any:
    """``kind(query[name])``, None when absent; ConfigError when not a number."""
    if name not in query:
        return None
    try:
        return kind(query[name])
    except ValueError as exc:
        raise ConfigError(f"{name} must be a number, got {query[name]!r}", key=name) from exc


def check_fields(body: dict[str, Any], allowed: set[str], what: str) -> None:
    """Refuse fields the endpoint does not know (a typo must not be silently ignored)."""
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise ConfigError(f"unknown {what} fields {unknown}", key=unknown[0])
