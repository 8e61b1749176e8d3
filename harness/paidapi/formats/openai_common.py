"""What OpenAI's formats share: the error body and the model parameter.

Error body (every route): ``{"error": {"message", "type", "param", "code"}}``
with the HTTP status; the official client raises the matching
``openai.APIStatusError`` subclass (400 BadRequestError, 404 NotFoundError,
429 RateLimitError, >= 500 InternalServerError...).
"""
from __future__ import annotations

from typing import Any

from harness.errors import ConfigError


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
