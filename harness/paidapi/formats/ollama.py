"""Ollama's ``POST /api/chat`` and ``POST /api/generate``: streamed (their default) as NDJSON, or whole.

Chat answer: ``{"model", "created_at", "message": {"role": "assistant",
"content"}, "done": true, "done_reason": "stop", "prompt_eval_count",
"eval_count", ...durations}``; generate answers ``"response"`` instead of
``"message"``. Streamed (``"stream"`` absent or true): one JSON object per
line, each with a piece of the text and ``"done": false``, then the last
with ``"done": true`` and the counts. Errors: ``{"error": "..."}`` with the
status (404 for a model that is not pulled); an error after a stream opened
is one more line ``{"error": "..."}``, as Ollama writes it.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from harness.errors import ConfigError
from harness.paidapi.formats.base import Call, WireFormat
from harness.paidapi.formats.text import content_text, pieces_of
from harness.paidapi.provider import Answer

NDJSON = "application/x-ndjson"


def ollama_error(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """Ollama's error body (the status is the HTTP status; ``code`` is unused)."""
    return {"error": message}


def line(data: dict[str, Any]) -> bytes:
    """One NDJSON line."""
    return (json.dumps(data, separators=(",", ":")) + "\n").encode()


class _Ollama(WireFormat):
    """What both of Ollama's generation routes share."""

    head_events = 0
    stream_content_type = NDJSON
    text_field = ""

    def _model(self, body: dict[str, Any]) -> str:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise ConfigError("model is required", key="model")
        return model

    def _piece(self, call: Call, text: str, done: bool) -> dict[str, Any]:
        raise NotImplementedError

    def _last(self, call: Call, answer: Answer, text: str) -> dict[str, Any]:
        tokens_in, tokens_out = answer.body["tokens_in"], answer.body["tokens_out"]
        return {**self._piece(call, text, True), "done_reason": "stop", "total_duration": 0, "load_duration": 0,
                "prompt_eval_count": tokens_in, "prompt_eval_duration": 0, "eval_count": tokens_out,
                "eval_duration": 0}

    def answer(self, call: Call, answer: Answer) -> dict[str, Any]:
        return self._last(call, answer, answer.body["output"])

    def events(self, call: Call, answer: Answer) -> list[bytes]:
        pieces = [line(self._piece(call, piece, False)) for piece in pieces_of(answer.body["output"])]
        return [*pieces, line(self._last(call, answer, ""))]

    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        return ollama_error(status, message, code)

    def stream_error(self, status: int, message: str) -> bytes:
        return line(ollama_error(status, message))

    def unknown_model(self, model: str) -> str:
        return f'model "{model}" not found, try pulling it first'


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class OllamaChat(_Ollama):
    """``/api/chat``: messages in, a message out."""

    name = "ollama.chat"

    def parse(self, body: dict[str, Any]) -> Call:
        model = self._model(body)
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise ConfigError("messages must be a list of messages", key="messages")
        prompt = "\n".join(content_text(m.get("content"), f"messages[{i}]") for i, m in enumerate(messages))
        return Call(prompt=prompt, model=model, stream=body.get("stream", True) is not False)

    def _piece(self, call: Call, text: str, done: bool) -> dict[str, Any]:
        return {"model": call.model, "created_at": _now(), "message": {"role": "assistant", "content": text},
                "done": done}


class OllamaGenerate(_Ollama):
    """``/api/generate``: a prompt in, a response out."""

    name = "ollama.generate"

    def parse(self, body: dict[str, Any]) -> Call:
        model = self._model(body)
        prompt = body.get("prompt", "")
        if not isinstance(prompt, str):
            raise ConfigError("prompt must be a string", key="prompt")
        system = body.get("system")
        text = f"{system}\n{prompt}" if isinstance(system, str) and system else prompt
        return Call(prompt=text, model=model, stream=body.get("stream", True) is not False)

    def _piece(self, call: Call, text: str, done: bool) -> dict[str, Any]:
        return {"model": call.model, "created_at": _now(), "response": text, "done": done}
