"""The HTTP face of the fake provider: the model route, plus the control API.

Model route: ``POST /v1/generate`` (any ``POST /v1/<name>`` behaves the
same, so rules and gates can target one route). Body ``{"prompt": str}``;
headers ``Idempotency-Key``, ``X-Job-Id``, ``X-Step``, ``X-Attempt`` (``X-Caller-Pid``:
header only), or the
same fields in the body (``idempotency_key``, ``job_id``, ``step``,
``attempt``) when the header is absent. The answer is
``{"call_id", "output", "billed", "replayed", "latency"}`` (200) or
``{"call_id", "error"}`` with the failure's status. What happens in between
is in ``provider.py``.

The control API lives under ``/_jobquake`` (``control_api.py``).

The app must run with ``handler_cancellation=True``: that is how a client
hanging up becomes visible (the handler is cancelled, the call is not).
"""
from __future__ import annotations

import asyncio

from aiohttp import web

from harness.errors import ConfigError
from harness.paidapi._http import PROVIDER, config_errors_as_400, json_body
from harness.paidapi.control_api import control_routes
from harness.paidapi.provider import ModelRequest, Provider

CONTROL_PREFIX = "/_jobquake"


def make_app(provider: Provider | None = None) -> web.Application:
    """The aiohttp application serving ``provider`` (a fresh default one if None)."""
    app = web.Application(middlewares=[config_errors_as_400])
    app[PROVIDER] = provider or Provider()
    app.on_shutdown.append(_stop_provider)
    app.add_routes([web.post("/v1/{name}", generate), *control_routes(CONTROL_PREFIX)])
    return app


async def _stop_provider(app: web.Application) -> None:
    # the sites no longer accept calls; answer the open ones so shutdown never waits
    await app[PROVIDER].stop()


async def generate(request: web.Request) -> web.Response:
    """One model call: accepted, served in its own task, billed even if we hang up."""
    provider = request.app[PROVIDER]
    record, serving = provider.accept(await read_model_request(request))
    try:
        answer = await asyncio.shield(serving)
    except asyncio.CancelledError:
        provider.client_gone(record)
        raise
    return web.json_response(answer.body, status=answer.status)


async def read_model_request(request: web.Request) -> ModelRequest:
    """The call's prompt and identifying fields; ConfigError (400) when malformed."""
    body = await json_body(request)
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise ConfigError("the body needs a string 'prompt'", key="prompt")

    def field(header: str, name: str) -> str | None:
        value = request.headers.get(header, body.get(name))
        return None if value is None else str(value)

    attempt = field("X-Attempt", "attempt")
    if attempt is not None and not attempt.lstrip("-").isdigit():
        raise ConfigError(f"attempt must be an integer, got {attempt!r}", key="attempt")
    pid = request.headers.get("X-Caller-Pid")
    caller_pid = int(pid) if pid is not None and pid.isdigit() else None  # a bad header attributes nothing
    return ModelRequest(
        route=request.path, prompt=prompt, job_id=field("X-Job-Id", "job_id"),
        step=field("X-Step", "step"), attempt=None if attempt is None else int(attempt),
        key=field("Idempotency-Key", "idempotency_key"), caller_pid=caller_pid,
    )
