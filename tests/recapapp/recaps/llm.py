"""The two model calls: the summary through OpenRouter, the action items through OpenAI.

Both send an idempotency key that is the same on every attempt at a recap,
so a provider that honours it bills a repeated call once. Transient errors
(a refused connection, 429, 5xx) are tried again a few times here; nothing
else is, and certainly not the task's soft time limit.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, TypeVar

import httpx
import openai
from celery.exceptions import SoftTimeLimitExceeded

from recaps.bugs import bug
from recaps.config import get_settings

log = logging.getLogger(__name__)
T = TypeVar("T")

OPENROUTER_URL = "https://openrouter.ai/api/v1/chat/completions"
TRIES = 3
PROMPTS = {
    "en": "Summarise this meeting in five sentences.\n\n{transcript}",
    "de": "Fasse diese Besprechung in fünf Sätzen zusammen.\n\n{transcript}",
    "fr": "Résume cette réunion en cinq phrases.\n\n{transcript}",
}
ACTIONS = "List the action items of this meeting, one per line:\n\n{summary}"


class ModelTimeout(Exception):
    """A model did not answer in time."""


def prompt_for(language: str, transcript: str) -> str:
    """The summary prompt; KeyError for a language there is no prompt for."""
    return PROMPTS[language].format(transcript=transcript)


def summarise(language: str, transcript: str, *, key: str) -> str:
    """The meeting's summary, from OpenRouter."""
    settings = get_settings()
    body = {"model": settings.llm.summary_model, "max_tokens": settings.llm.max_tokens,
            "messages": [{"role": "user", "content": prompt_for(language, transcript)}]}
    headers = {"Authorization": f"Bearer {settings.openrouter_key.get_secret_value()}",
               "Idempotency-Key": key, "X-Title": "recaps"}
    timeout = None if bug("no-request-timeout") else 45.0

    def call() -> str:
        try:
            response = httpx.post(OPENROUTER_URL, json=body, headers=headers, timeout=timeout)
        except httpx.TimeoutException as exc:
            raise ModelTimeout(f"OpenRouter gave no answer within {timeout}s") from exc
        response.raise_for_status()
        return response.json()["choices"][0]["message"]["content"]

    return _with_retries(call)


def action_items(summary: str, *, key: str) -> list[str]:
    """The meeting's action items, from OpenAI."""
    settings = get_settings()
    client = openai.OpenAI(api_key=settings.openai_api_key.get_secret_value(),
                           timeout=settings.llm.actions_timeout_s, max_retries=0)

    def call() -> list[str]:
        try:
            answer = client.chat.completions.create(
                model=settings.llm.actions_model, messages=[{"role": "user", "content": ACTIONS.format(summary=summary)}],
                extra_headers={"Idempotency-Key": key})
        except openai.APITimeoutError as exc:
            raise ModelTimeout(f"OpenAI gave no answer within {settings.llm.actions_timeout_s}s") from exc
        except openai.APIConnectionError as exc:
            # the client wraps whatever interrupted the request; the soft time limit is the task's
            if isinstance(exc.__cause__, SoftTimeLimitExceeded):
                raise exc.__cause__ from None
            raise
        text = answer.choices[0].message.content or ""
        return [line.strip("-• ").strip() for line in text.splitlines() if line.strip("-• ").strip()]

    return _with_retries(call)


def _transient(exc: BaseException) -> bool:
    if bug("retry-swallows-soft-limit"):
        return True  # "whatever the provider throws is worth another try"
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code == 429 or exc.response.status_code >= 500
    return isinstance(exc, (httpx.TransportError, openai.APIConnectionError, openai.RateLimitError,
                            openai.InternalServerError)) and not isinstance(exc, ModelTimeout)


def _with_retries(call: Callable[[], T]) -> T:
    for attempt in range(1, TRIES + 1):
        try:
            return call()
        except Exception as exc:
            if attempt == TRIES or isinstance(exc, ModelTimeout) or not _transient(exc):
                raise
            log.warning("model call failed (try %d of %d): %r", attempt, TRIES, exc)
            time.sleep(0.5 * attempt)
    raise AssertionError("unreachable")
