"""What OpenAI's formats share: the error body, ids, usage and message text.

Error body (every route): ``{"error": {"message", "type", "param", "code"}}``
with the HTTP status; the official client raises the matching
``openai.APIStatusError`` subclass (400 BadRequestError, 404 NotFoundError,
429 RateLimitError, >= 500 InternalServerError...).
"""
from __future__ import annotations

from typing import Any

from harness.errors import ConfigError
from harness.paidapi.pricing import CHARS_PER_TOKEN


def openai_error(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """OpenAI's error body for ``status``."""
    if status == 429:
        kind, code = "requests", code or "rate_limit_exceeded"
    elif status >= 500:
        kind = "server_error"
    elif status == 401:
        kind, code = "invalid_request_error", code or "invalid_api_key"
    else:
        kind = "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def required_model(body: dict[str, Any]) -> str:
    """The body's ``model``; ConfigError naming the parameter when absent."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ConfigError("you must provide a model parameter (a string)", key="model")
    return model


def content_text(content: Any, where: str) -> str:
    """The text of a message content: a string, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    raise ConfigError(f"{where}: content must be a string or a list of parts, got {content!r}",
                      key="content")


def pieces_of(text: str) -> list[str]:
    """The text as the model streams it: one piece per token (4 characters)."""
    return [text[i:i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)] or [""]


def call_suffix(call_id: Any) -> str:
    """The id part that ties an answer to its ledger record (``...-jq<call_id>``)."""
    return f"jq{call_id}"
