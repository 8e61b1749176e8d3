"""Anthropic ``POST /v1/messages``: plain, or streamed as typed events.

Answer: a ``message`` with one ``text`` content block, ``stop_reason:
"end_turn"`` and ``usage`` (input / output tokens). Streamed:
``message_start``, ``content_block_start``, ``ping``, one
``content_block_delta`` (``text_delta``) per token, ``content_block_stop``,
``message_delta`` (stop reason and output tokens), ``message_stop``.
Errors: ``{"type": "error", "error": {"type", "message"}}``, the type
following the status, so the official client raises its own exception
(404 NotFoundError, 429 RateLimitError, 529 OverloadedError...).
"""
from __future__ import annotations

from typing import Any

from harness.errors import ConfigError
from harness.paidapi.formats.base import Call, WireFormat, sse
from harness.paidapi.formats.text import call_suffix, content_text, pieces_of
from harness.paidapi.provider import Answer

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 504: "timeout_error",
               529: "overloaded_error"}


def anthropic_error(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """Anthropic's error body for ``status`` (``code`` is OpenAI's notion; unused here)."""
    kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


class AnthropicMessages(WireFormat):
    """The messages format."""

    name = "anthropic.messages"
    head_events = 3  # message_start, content_block_start, ping

    def parse(self, body: dict[str, Any]) -> Call:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise ConfigError("model: Field required", key="model")
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ConfigError("max_tokens: Field required (a positive integer)", key="max_tokens")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or \
                not all(isinstance(m, dict) for m in messages):
            raise ConfigError("messages: must be a non-empty list of messages", key="messages")
        texts = [content_text(body.get("system"), "system")] if body.get("system") else []
        texts += [content_text(m.get("content"), f"messages.{n}") for n, m in enumerate(messages)]
        return Call(prompt="\n".join(texts), model=model, stream=bool(body.get("stream")))

    def answer(self, call: Call, answer: Answer) -> dict[str, Any]:
        return {**_message(call, answer), "content": [{"type": "text", "text": answer.body["output"]}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": answer.body["tokens_in"],
                          "output_tokens": answer.body["tokens_out"]}}

    def events(self, call: Call, answer: Answer) -> list[bytes]:
        start = {**_message(call, answer), "content": [], "stop_reason": None,
                 "usage": {"input_tokens": answer.body["tokens_in"], "output_tokens": 1}}
        steps: list[dict[str, Any]] = [
            {"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "ping"},
            *({"type": "content_block_delta", "index": 0,
               "delta": {"type": "text_delta", "text": piece}}
              for piece in pieces_of(answer.body["output"])),
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": answer.body["tokens_out"]}},
            {"type": "message_stop"},
        ]
        return [sse(step, event=step["type"]) for step in steps]

    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        return anthropic_error(status, message, code)

    def stream_error(self, status: int, message: str) -> bytes:
        return sse(anthropic_error(status, message), event="error")

    def unknown_model(self, model: str) -> str:
        return f"model: {model}"


def _message(call: Call, answer: Answer) -> dict[str, Any]:
    return {"id": f"msg_{call_suffix(answer.body['call_id'])}", "type": "message",
            "role": "assistant", "model": call.model, "stop_sequence": None}
