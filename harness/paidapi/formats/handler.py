"""The route handler every format shares: read and attribute the call, then answer it plain
or streamed. Apart from ``base.py`` so that ``streaming.py`` builds on ``base.py`` alone."""
from __future__ import annotations

import json

from aiohttp import web

from harness.errors import ConfigError
from harness.paidapi._http import PROVIDER, json_body
from harness.paidapi.formats.base import (JSON, WireFormat, accepted, error_response, model_request_for, refuse,
                                          send)
from harness.paidapi.formats.streaming import serve_stream


async def serve(request: web.Request, fmt: WireFormat) -> web.StreamResponse:
    """One model call in ``fmt``: accepted, served in its own task, billed even if we hang up."""
    provider = request.app[PROVIDER]
    try:
        body = await json_body(request)
        call = fmt.parse(body)
        if not provider.prices.knows(call.model):
            return refuse(request, provider, fmt, 404, f"unknown model {call.model!r}", model=call.model)
        model_request = model_request_for(request, provider, fmt.name, call, body)
    except ConfigError as exc:
        return error_response(fmt, 400, str(exc))
    if call.stream:
        return await serve_stream(request, provider, fmt, call, model_request)
    record, answer = await accepted(request, provider, model_request)
    if answer.status != 200:
        return error_response(fmt, answer.status, str(answer.body.get("error")))
    body_bytes = json.dumps(fmt.answer(call, answer)).encode()
    return await send(request, provider, record, answer, [body_bytes], JSON)
