"""The one model call: a ticket's summary, through the official openai client.

- A deadline on every call (``TICKETS_MODEL_TIMEOUT_S``), and no retries
  inside the client: a call that did not answer in time fails the ticket
  with ``timeout:``; retrying is the task's business.
- An idempotency key per ticket and step, the same on every try: a provider
  that honours it bills a retried call once.
- Transient provider errors (rate limit, 5xx, a refused connection) are
  retried a few times; nothing else is, and certainly not the soft time
  limit, which must reach the task.
"""
from __future__ import annotations

import logging
import time
import uuid

import openai
from celery.exceptions import SoftTimeLimitExceeded

from tickets import settings
from tickets.bugs import bug

log = logging.getLogger(__name__)
MODEL = "gpt-4o-mini"
TRIES = 3
TRANSIENT = (openai.RateLimitError, openai.InternalServerError)


class ModelTimeout(Exception):
    """The model did not answer within the deadline."""


def client() -> openai.OpenAI:
    if bug("no-model-timeout"):  # the client's own default applies: ten minutes
        return openai.OpenAI(base_url=settings.openai_base_url(), api_key=settings.openai_api_key(),
                             max_retries=0)
    return openai.OpenAI(base_url=settings.openai_base_url(), api_key=settings.openai_api_key(),
                         timeout=settings.model_timeout_s(), max_retries=0)


def idempotency_key(ticket_no: int, step: str) -> str:
    if bug("fresh-key-per-retry"):
        return f"ticket-{ticket_no}-{step}-{uuid.uuid4().hex[:8]}"
    return f"ticket-{ticket_no}-{step}"


def summarise(ticket_no: int, subject: str, messages: list[str]) -> str:
    """The model's summary of one ticket; ModelTimeout when the deadline passed."""
    prompt = f"Summarise this support ticket in two sentences.\nSubject: {subject}\n\n" + "\n---\n".join(messages)
    for attempt in range(1, TRIES + 1):
        try:
            return _ask(prompt, idempotency_key(ticket_no, "summary"))
        except Exception as exc:
            if attempt == TRIES or not _worth_retrying(exc):
                raise
            log.warning("model call failed (try %d of %d): %r", attempt, TRIES, exc)
            time.sleep(0.2 * attempt)
    raise AssertionError("unreachable")


def _ask(prompt: str, key: str) -> str:
    try:
        answer = client().chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": prompt}],
            extra_headers={"Idempotency-Key": key})
    except openai.APITimeoutError as exc:
        raise ModelTimeout(f"no answer within {settings.model_timeout_s():g}s") from exc
    except openai.APIConnectionError as exc:
        # the client wraps whatever interrupts the request, the soft time limit included:
        # that one belongs to the task, unwrapped
        if isinstance(exc.__cause__, SoftTimeLimitExceeded):
            raise exc.__cause__ from None
        raise
    return answer.choices[0].message.content or ""


def _worth_retrying(exc: BaseException) -> bool:
    if bug("swallows-soft-limit"):
        return True  # "anything the provider throws is worth another try"
    return isinstance(exc, TRANSIENT)
