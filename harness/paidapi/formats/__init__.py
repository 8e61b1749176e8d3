"""The providers' wire formats the fake provider serves, one module each.

``format_routes()`` lists their routes; ``unknown_route`` answers any other
path with the provider's own 404 body (Anthropic's when the request carries
``anthropic-version``, Ollama's under ``/api/``, else OpenAI's) and records
the call in the ledger as refused.
"""
from __future__ import annotations

from aiohttp import web

from harness.paidapi._http import PROVIDER
from harness.paidapi.formats.base import WireFormat, refuse
from harness.paidapi.formats.handler import serve
from harness.paidapi.formats.anthropic_messages import AnthropicMessages
from harness.paidapi.formats.ollama import OllamaChat, OllamaGenerate
from harness.paidapi.formats.openai_chat import OpenAIChat
from harness.paidapi.formats.openai_embeddings import OpenAIEmbeddings
from harness.paidapi.formats.openai_responses import OpenAIResponses

FORMATS: dict[str, WireFormat] = {
    "/v1/chat/completions": OpenAIChat(),
    "/v1/responses": OpenAIResponses(),
    "/v1/embeddings": OpenAIEmbeddings(),
    "/v1/messages": AnthropicMessages(),
    "/api/chat": OllamaChat(),
    "/api/generate": OllamaGenerate(),
}


def format_routes() -> list[web.RouteDef]:
    """``POST <path>`` for every format."""
    def handler(fmt: WireFormat):
        async def handle(request: web.Request) -> web.StreamResponse:
            return await serve(request, fmt)
        handle.__doc__ = f"One model call in the {fmt.name} format."
        return handle

    return [web.post(path, handler(fmt)) for path, fmt in FORMATS.items()]


async def unknown_route(request: web.Request) -> web.Response:
    """404 for a path no format serves, in the body of the provider the client speaks; recorded."""
    if "anthropic-version" in request.headers:
        fmt = FORMATS["/v1/messages"]
    elif request.path.startswith("/api/"):
        fmt = FORMATS["/api/chat"]
    else:
        fmt = FORMATS["/v1/chat/completions"]
    why = f"Invalid URL ({request.method} {request.path}): the fake paid API does not serve that route"
    return refuse(request, request.app[PROVIDER], fmt, 404, why)
