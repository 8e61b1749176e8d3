"""OpenAI ``POST /v1/chat/completions``: plain, or streamed as chunks ending in ``[DONE]``.

Answer: ``chat.completion`` with one choice (``message.content``,
``finish_reason: "stop"``) and ``usage`` (prompt / completion / total tokens).
Streamed: ``chat.completion.chunk`` events (the role, then one per token,
then ``finish_reason``), with ``stream_options.include_usage`` a last chunk
with no choices and the usage, then ``data: [DONE]``.
"""
from __future__ import annotations

import time
from typing import Any

from harness.errors import ConfigError
from harness.paidapi.formats.base import Call, WireFormat, sse
from harness.paidapi.formats.openai_common import openai_error, required_model
from harness.paidapi.formats.text import call_suffix, content_text, pieces_of
from harness.paidapi.provider import Answer


class OpenAIChat(WireFormat):
    """The chat completions format."""

    name = "openai.chat"
    head_events = 1  # the role

    def parse(self, body: dict[str, Any]) -> Call:
        model = required_model(body)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or \
                not all(isinstance(m, dict) for m in messages):
            raise ConfigError("'messages' must be a non-empty list of messages", key="messages")
        prompt = "\n".join(content_text(m.get("content"), f"messages[{i}]")
                           for i, m in enumerate(messages))
        options = body.get("stream_options") or {}
        return Call(prompt=prompt, model=model, stream=bool(body.get("stream")),
                    options={"include_usage": bool(options.get("include_usage"))})

    def answer(self, call: Call, answer: Answer) -> dict[str, Any]:
        return {
            **_head(call, answer, "chat.completion"),
            "choices": [{"index": 0, "logprobs": None, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer.body["output"],
                                     "refusal": None}}],
            "usage": _usage(answer),
        }

    def events(self, call: Call, answer: Answer) -> list[bytes]:
        head = _head(call, answer, "chat.completion.chunk")
        with_usage = call.options.get("include_usage")
        extra = {"usage": None} if with_usage else {}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return sse({**head, "choices": [choice], **extra})

        events = [chunk({"role": "assistant", "content": "", "refusal": None})]
        events += [chunk({"content": piece}) for piece in pieces_of(answer.body["output"])]
        events.append(chunk({}, "stop"))
        if with_usage:
            events.append(sse({**head, "choices": [], "usage": _usage(answer)}))
        return [*events, sse("[DONE]")]

    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        return openai_error(status, message, code)


def _head(call: Call, answer: Answer, kind: str) -> dict[str, Any]:
    return {"id": f"chatcmpl-{call_suffix(answer.body['call_id'])}", "object": kind,
            "created": int(time.time()), "model": call.model, "system_fingerprint": None}


def _usage(answer: Answer) -> dict[str, int]:
    tokens_in, tokens_out = answer.body["tokens_in"], answer.body["tokens_out"]
    return {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out}
