"""A streamed answer, sent as a provider sends it: opened when generation starts.

The stream opens (200, first events: the role, ``message_start``,
``response.created``...) as soon as the call is past modes and gates and
starts generating; the text and the closing events follow when the
generation ends. A client with a per-read timeout therefore sees what it
would see from the provider: an open stream whose tokens take the drawn
latency. A failure before the opening is an ordinary error answer (status
and body); after it, the stream ends with the format's error event.
"""
from __future__ import annotations

import asyncio
import dataclasses

from aiohttp import web

from harness.paidapi.formats.base import (
    Call, WireFormat, client_labels, error_response, finish, open_response, send)
from harness.paidapi.ledger import CallRecord
from harness.paidapi.provider import Answer, ModelRequest, Provider


async def serve_stream(request: web.Request, provider: Provider, fmt: WireFormat, call: Call,
                       model_request: ModelRequest) -> web.StreamResponse:
    """One streamed call: open at generation start, finish at generation end."""
    started = asyncio.Event()
    record, serving = provider.accept(dataclasses.replace(model_request, started=started))
    provider.ledger.update(record, **client_labels(request))
    await _until_started(provider, record, serving, started)
    if serving.done():  # answered before it generated (hang healed, fail, replay...)
        answer = serving.result()
        if answer.status != 200:
            return error_response(fmt, answer.status, str(answer.body.get("error")))
        return await send(request, provider, record, answer, fmt.events(call, answer), fmt.stream_content_type)
    response = await open_response(request, provider, record, fmt.stream_content_type)
    await _write_opening(provider, record, response,
                         fmt.events(call, _opening(record))[:fmt.head_events])
    answer = await _shielded(provider, record, serving)
    if answer.status != 200:
        error = fmt.stream_error(answer.status, str(answer.body.get("error")))
        return await finish(request, provider, record, response, Answer(200, {}), [error])
    rest = fmt.events(call, answer)[fmt.head_events:]
    return await finish(request, provider, record, response, answer, rest)


async def _write_opening(provider: Provider, record: CallRecord, response: web.StreamResponse,
                         head: list[bytes]) -> None:
    """Write the opening events, leaving the stream open."""
    try:
        for piece in head:
            await response.write(piece)
    except asyncio.CancelledError:
        provider.client_gone(record)
        raise
    except ConnectionResetError:
        provider.client_gone(record)


async def _until_started(provider: Provider, record: CallRecord, serving: asyncio.Task[Answer],
                         started: asyncio.Event) -> None:
    waiter = asyncio.ensure_future(started.wait())
    try:
        await asyncio.wait({waiter, serving}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        provider.client_gone(record)  # asyncio.wait leaves the serving task running
        raise
    finally:
        waiter.cancel()


async def _shielded(provider: Provider, record: CallRecord,
                    serving: asyncio.Task[Answer]) -> Answer:
    try:
        return await asyncio.shield(serving)
    except asyncio.CancelledError:
        provider.client_gone(record)
        raise


def _opening(record: CallRecord) -> Answer:
    """What the opening events need before the answer exists: the call's id and input."""
    return Answer(200, {"call_id": record.call_id, "output": "", "tokens_in": record.tokens_in,
                        "tokens_out": 0})
