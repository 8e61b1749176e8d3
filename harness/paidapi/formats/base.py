"""What every provider wire format shares: read, attribute, answer, send (the route handler is ``handler.py``).

A format (``openai_chat.py``, ``anthropic_messages.py``...) only says how
its request body reads (``parse``), how a finished generation looks
(``answer``, and ``events`` when streamed) and how an error looks
(``error``). Everything else is here and the same for all: attribution,
the unknown-model 404, the provider's call logic (modes, gates, idempotency,
billing at generation end even when the client has gone), and sending,
including the half answer of ``hang_mid_stream``.

A stream opens when generation starts (past modes and gates) with the
events that carry no text yet; the rest follow when the generation ends (its
drawn latency), and an error after the opening is an error event in the
stream, as the providers do (``streaming.py``). Parameters that
shape the output (``max_tokens``, ``n``, ``temperature``, tools) are accepted
and not applied: the fake model always answers one document category.
"""
from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Mapping

from aiohttp import web

from harness.errors import ConfigError
from harness.paidapi.attribution import attribute
from harness.paidapi.ledger import CallRecord
from harness.paidapi.provider import Answer, ModelRequest, Provider

JSON = "application/json"
EVENT_STREAM = "text/event-stream"


@dataclass(frozen=True)
class Call:
    """What a format reads from a request body."""

    prompt: str  # all the text the model reads, joined
    model: str
    stream: bool = False
    counts_output: bool = True
    options: Mapping[str, Any] = field(default_factory=dict)  # format-specific


class WireFormat(ABC):
    """One provider's request, answer and error shapes."""

    name: str  # the ledger's ``format``
    head_events: int = 0  # events of a stream that carry no text: sent when generation starts
    stream_content_type: str = EVENT_STREAM  # server-sent events; Ollama's NDJSON differs

    @abstractmethod
    def parse(self, body: dict[str, Any]) -> Call:
        """The call a body asks for; ConfigError (answered 400) when malformed."""

    @abstractmethod
    def answer(self, call: Call, answer: Answer) -> dict[str, Any]:
        """The provider's JSON answer for a finished generation."""

    def events(self, call: Call, answer: Answer) -> list[bytes]:
        """The provider's stream of server-sent events for a finished generation."""
        raise ConfigError(f"{self.name} does not stream", key="stream")

    @abstractmethod
    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        """The provider's error body."""

    def stream_error(self, status: int, message: str) -> bytes:
        """The event that ends an open stream with an error."""
        return sse(self.error(status, message))

    def unknown_model(self, model: str) -> str:
        """The provider's words for a model it does not serve."""
        return f"The model `{model}` does not exist or you do not have access to it."


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded unless it is already a string."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def error_response(fmt: WireFormat, status: int, message: str,
                   code: str | None = None) -> web.Response:
    """An error as the provider sends it."""
    return web.json_response(fmt.error(status, message, code), status=status)


def model_request_for(request: web.Request, provider: Provider, format_name: str, call: Call,
                      body: Mapping[str, Any],
                      fallback: Mapping[str, Any] | None = None) -> ModelRequest:
    """The provider's view of the call, attributed (see ``attribution.py``).

    ``fallback`` holds labels a format accepts in its body when a header is absent.
    """
    fallback = fallback or {}

    def header(name: str, fallback_name: str) -> str | None:
        value = request.headers.get(name, fallback.get(fallback_name))
        return None if value is None else str(value)

    labels = {"job_id": header("X-Job-Id", "job_id"), "step": header("X-Step", "step"),
              "attempt": header("X-Attempt", "attempt")}
    idempotency_key = header("Idempotency-Key", "idempotency_key")
    call_key = request.headers.get(provider.call_key_header, idempotency_key)
    who = attribute(labels, call_key, provider.call_key, body)
    return ModelRequest(
        route=request.path, prompt=call.prompt, job_id=who.job_id, step=who.step,
        attempt=who.attempt, key=idempotency_key, format=format_name, model=call.model,
        caller_pid=_caller_pid(request), attributed_by=who.attributed_by,
        counts_output=call.counts_output,
    )


def _caller_pid(request: web.Request) -> int | None:
    value = request.headers.get("X-Caller-Pid")
    if value is None:
        return None
    if not value.isdigit():
        raise ConfigError(f"header X-Caller-Pid must be a process id, got {value!r}",
                          key="X-Caller-Pid")
    return int(value)


def client_labels(request: web.Request) -> dict[str, Any]:
    """What the call's client said about itself, for the ledger: the read timeout it set (as sent, and
    as the app's code asked when jobquake scaled it), and the provider URL the code called when the
    instrumentation routed it here. Without jobquake's headers, the official clients' own
    ``x-stainless-read-timeout`` / ``x-stainless-timeout`` give the timeout."""
    headers = request.headers
    sent = headers.get("X-Jobquake-Timeout") or headers.get("x-stainless-read-timeout") or \
        headers.get("x-stainless-timeout")
    return {"client_timeout": _seconds(sent), "app_timeout": _seconds(headers.get("X-Jobquake-App-Timeout")),
            "routed_from": headers.get("X-Jobquake-Routed-From")}


def _seconds(value: str | None) -> float | str | None:
    """A timeout header as the ledger keeps it: seconds, ``"none"`` (sent without one), or None (not known)."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return "none" if value.strip().lower() in ("none", "null") else None


def refuse(request: web.Request, provider: Provider, fmt: WireFormat, status: int, why: str,
           model: str | None = None) -> web.Response:
    """Answer a call the fake cannot serve (an unknown route or model) with the provider's error, and
    record it in the ledger (``refused``: why), so a wait on paid calls can say what became of them."""
    provider.ledger.refuse(route=request.path, status=status, refused=why, format=fmt.name, model=model,
                           job_id=request.headers.get("X-Job-Id"), caller_pid=_pid_or_none(request),
                           **client_labels(request))
    return error_response(fmt, status, fmt.unknown_model(model) if model is not None else why,
                          "model_not_found" if model is not None else None)


def _pid_or_none(request: web.Request) -> int | None:
    value = request.headers.get("X-Caller-Pid", "")
    return int(value) if value.isdigit() else None


async def accepted(request: web.Request, provider: Provider,
                   model_request: ModelRequest) -> tuple[CallRecord, Answer]:
    """Hand the call to the provider and await its answer; a client leaving does not stop it."""
    record, serving = provider.accept(model_request)
    provider.ledger.update(record, **client_labels(request))
    try:
        return record, await asyncio.shield(serving)
    except asyncio.CancelledError:
        provider.client_gone(record)
        raise


async def send(request: web.Request, provider: Provider, record: CallRecord, answer: Answer,
               pieces: list[bytes], content_type: str) -> web.StreamResponse:
    """Send the answer's pieces; a stalled answer sends half, waits, then cuts the connection."""
    if answer.stall is None and content_type == JSON:
        return web.Response(body=pieces[0], content_type=JSON)
    response = await open_response(request, provider, record, content_type,
                                   len(pieces[0]) if content_type == JSON else None)
    return await finish(request, provider, record, response, answer, pieces)


async def open_response(request: web.Request, provider: Provider, record: CallRecord,
                        content_type: str, length: int | None = None) -> web.StreamResponse:
    """Send the status and headers of a 200 whose body follows in pieces."""
    response = web.StreamResponse(status=200)
    response.content_type = content_type
    if length is not None:
        response.content_length = length  # a stalled client waits for bytes that never come
    else:
        response.headers["Cache-Control"] = "no-cache"
    try:
        await response.prepare(request)
    except asyncio.CancelledError:
        provider.client_gone(record)
        raise
    return response


async def finish(request: web.Request, provider: Provider, record: CallRecord,
                 response: web.StreamResponse, answer: Answer,
                 pieces: list[bytes]) -> web.StreamResponse:
    """Write ``pieces`` and end the body; when the answer stalls, half of them, then the cut."""
    try:
        for piece in pieces if answer.stall is None else _first_half(pieces):
            await response.write(piece)
        if answer.stall is None:
            await response.write_eof()
            return response
        await answer.stall.wait()
    except asyncio.CancelledError:
        provider.client_gone(record)
        raise
    except ConnectionResetError:
        provider.client_gone(record)
        return response
    if request.transport is not None:
        request.transport.close()  # the cut: no end of stream, no complete body
    return response


def _first_half(pieces: list[bytes]) -> list[bytes]:
    if len(pieces) == 1:
        return [pieces[0][: len(pieces[0]) // 2]]
    return pieces[: max(1, len(pieces) // 2)]
