"""OpenAI ``POST /v1/responses``: plain, or streamed as typed events.

Answer: a ``response`` object, ``status: "completed"``, one ``message``
output item holding one ``output_text`` part, and ``usage`` (input / output
/ total tokens). Streamed (no ``[DONE]``): ``response.created``,
``response.in_progress``, ``response.output_item.added``,
``response.content_part.added``, one ``response.output_text.delta`` per
token, ``response.output_text.done``, ``response.content_part.done``,
``response.output_item.done``, ``response.completed``; each with its
``sequence_number``.
"""
from __future__ import annotations

import time
from typing import Any

from harness.errors import ConfigError
from harness.paidapi.formats.base import Call, WireFormat, sse
from harness.paidapi.formats.openai_common import openai_error, required_model
from harness.paidapi.formats.text import call_suffix, content_text, pieces_of
from harness.paidapi.provider import Answer


class OpenAIResponses(WireFormat):
    """The responses format."""

    name = "openai.responses"
    head_events = 4  # created, in_progress, output_item.added, content_part.added

    def parse(self, body: dict[str, Any]) -> Call:
        model = required_model(body)
        texts = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
        given = body.get("input")
        if isinstance(given, str):
            texts.append(given)
        elif isinstance(given, list) and given and all(isinstance(i, dict) for i in given):
            texts += [content_text(item.get("content"), f"input[{n}]") for n, item in enumerate(given)]
        else:
            raise ConfigError("'input' must be a string or a non-empty list of items", key="input")
        return Call(prompt="\n".join(texts), model=model, stream=bool(body.get("stream")),
                    options={"instructions": body.get("instructions")})

    def answer(self, call: Call, answer: Answer) -> dict[str, Any]:
        return _response(call, answer, "completed", [_message(answer, "completed")])

    def events(self, call: Call, answer: Answer) -> list[bytes]:
        text, item_id = answer.body["output"], _item_id(answer)
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        started = _response(call, answer, "in_progress", [])
        empty_part = {"type": "output_text", "text": "", "annotations": []}
        steps: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"response": started}),
            ("response.in_progress", {"response": started}),
            ("response.output_item.added", {"output_index": 0,
                                            "item": _message(answer, "in_progress", parts=[])}),
            ("response.content_part.added", {**where, "part": empty_part}),
            *(("response.output_text.delta", {**where, "delta": piece, "logprobs": []})
              for piece in pieces_of(text)),
            ("response.output_text.done", {**where, "text": text, "logprobs": []}),
            ("response.content_part.done", {**where, "part": {**empty_part, "text": text}}),
            ("response.output_item.done", {"output_index": 0, "item": _message(answer, "completed")}),
            ("response.completed", {"response": self.answer(call, answer)}),
        ]
        return [sse({"type": kind, "sequence_number": n, **data}, event=kind)
                for n, (kind, data) in enumerate(steps)]

    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        return openai_error(status, message, code)

    def stream_error(self, status: int, message: str) -> bytes:
        kind = "response.failed"
        failed = {"id": "resp_failed", "object": "response", "status": "failed", "output": [],
                  "error": {"code": openai_error(status, message)["error"]["type"],
                            "message": message}}
        return sse({"type": kind, "sequence_number": self.head_events, "response": failed},
                   event=kind)


def _item_id(answer: Answer) -> str:
    return f"msg_{call_suffix(answer.body['call_id'])}"


def _message(answer: Answer, status: str, parts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    text_part = {"type": "output_text", "text": answer.body["output"], "annotations": []}
    return {"type": "message", "id": _item_id(answer), "status": status, "role": "assistant",
            "content": [text_part] if parts is None else parts}


def _response(call: Call, answer: Answer, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    tokens_in, tokens_out = answer.body["tokens_in"], answer.body["tokens_out"]
    done = status == "completed"
    return {
        "id": f"resp_{call_suffix(answer.body['call_id'])}", "object": "response",
        "created_at": int(time.time()), "status": status, "model": call.model,
        "output": output, "error": None, "incomplete_details": None,
        "instructions": call.options.get("instructions"), "metadata": {},
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "temperature": 1.0, "top_p": 1.0, "text": {"format": {"type": "text"}},
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out,
                  "total_tokens": tokens_in + tokens_out,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}} if done else None,
    }
