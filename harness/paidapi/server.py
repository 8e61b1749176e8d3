"""The HTTP face of the fake provider: the model route, plus the control API.

Model route: ``POST /v1/generate`` (any ``POST /v1/<name>`` behaves the
same, so rules and gates can target one route). Body ``{"prompt": str}``;
headers ``Idempotency-Key``, ``X-Job-Id``, ``X-Step``, ``X-Attempt`` (``X-Caller-Pid``:
header only), or the
same fields in the body (``idempotency_key``, ``job_id``, ``step``,
``attempt``) when the header is absent; ``X-Caller-Pid`` names the calling
process. Calls are attributed as ``attribution.py`` says. The answer is
``{"call_id", "output", "billed", "replayed", "latency", "tokens_in",
"tokens_out"}`` (200) or ``{"call_id", "error"}`` with the failure's
status. What happens in between is in ``provider.py``.

The providers' own formats (OpenAI chat completions, responses, embeddings;
Anthropic messages) are served beside it (``formats/``); any other path
under ``/v1/``, and a one-segment path called by a provider's client (its
body names a ``model``), is the provider's 404.

The control API lives under ``/_jobquake`` (``control_api.py``); requests
from web browsers are refused there (403), as the fault proxy does, and so
is every request without the session's token (401) when the server has one
(``harness._control_token``); each refusal is counted (``stats``).

The app must run with ``handler_cancellation=True``: that is how a client
hanging up becomes visible (the handler is cancelled, the call is not).
"""
from __future__ import annotations

import json

from aiohttp import web

from harness._browser import browser_mark
from harness._control_token import HEADER, authorised
from harness.errors import ConfigError
from harness.paidapi._http import PROVIDER, REFUSED, TOKEN, config_errors_as_400, json_body
from harness.paidapi.control_api import control_routes
from harness.paidapi.formats import format_routes, unknown_route
from harness.paidapi.formats.base import Call, JSON, accepted, model_request_for, send
from harness.paidapi.pricing import JOBQUAKE_MODEL
from harness.paidapi.provider import ModelRequest, Provider

CONTROL_PREFIX = "/_jobquake"
HEALTH = f"{CONTROL_PREFIX}/health"  # the readiness probe: answers anyone, tells and changes nothing


def make_app(provider: Provider | None = None, token: str | None = None) -> web.Application:
    """The aiohttp application serving ``provider`` (a fresh default one if None); its control
    routes need ``token`` when given."""
    app = web.Application(middlewares=[refuse_browsers_on_control, config_errors_as_400])
    app[PROVIDER] = provider or Provider()
    app[TOKEN] = token
    app[REFUSED] = []
    app.on_shutdown.append(_stop_provider)
    app.add_routes([*format_routes(), web.post("/v1/{name}", generate),
                    *control_routes(CONTROL_PREFIX), web.route("*", "/v1/{tail:.*}", unknown_route),
                    web.route("*", "/{tail:(?!_jobquake/).*}", unknown_route)])
    return app


@web.middleware
async def refuse_browsers_on_control(request: web.Request, handler) -> web.StreamResponse:
    """403 for a browser's request to the control API: a web page must not arm modes or gates;
    401 for a request without the session's token: nor may another local user."""
    if not request.path.startswith(CONTROL_PREFIX + "/"):
        return await handler(request)
    mark = browser_mark(request.headers)
    if mark is not None:
        return web.json_response({"error": f"requests from browsers are refused ({mark} header)"}, status=403)
    if request.path != HEALTH and not authorised(request.headers, request.app[TOKEN]):
        request.app[REFUSED].append(f"{request.method} {request.path} from {request.remote}")
        return web.json_response({"error": f"the control API needs the session's token ({HEADER} header)"},
                                 status=401)
    return await handler(request)


async def _stop_provider(app: web.Application) -> None:
    # the sites no longer accept calls; answer the open ones so shutdown never waits
    await app[PROVIDER].stop()


async def generate(request: web.Request) -> web.StreamResponse:
    """One model call: accepted, served in its own task, billed even if we hang up."""
    provider = request.app[PROVIDER]
    if await _from_a_provider_client(request):
        return await unknown_route(request)  # e.g. /v1/moderations: a route no format serves
    record, answer = await accepted(request, provider, await read_model_request(request))
    if answer.status != 200 or answer.stall is None:
        return web.json_response(answer.body, status=answer.status)
    return await send(request, provider, record, answer, [json.dumps(answer.body).encode()], JSON)


async def _from_a_provider_client(request: web.Request) -> bool:
    """True for a provider's client (its body names a model): jobquake's own format has none."""
    if "anthropic-version" in request.headers:
        return True
    try:
        return "model" in await json_body(request)
    except ConfigError:
        return False  # read_model_request says what is wrong with the body


async def read_model_request(request: web.Request) -> ModelRequest:
    """The call's prompt and identifying fields; ConfigError (400) when malformed."""
    body = await json_body(request)
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise ConfigError("the body needs a string 'prompt'", key="prompt")
    return model_request_for(request, request.app[PROVIDER], "jobquake",
                             Call(prompt=prompt, model=JOBQUAKE_MODEL), body, fallback=body)
