"""The model, through the official openai client: a deadline on every call, a stable idempotency key.

- No retries inside the client: a call that did not answer within
  ``REVIEW_MODEL_TIMEOUT_S`` raises ``ModelTimeout``, and the review fails
  with a ``timeout:`` reason; the task decides about retries.
- The idempotency key names the review and the step, the same on every
  attempt: a provider that honours it bills a retried step once.
- The client wraps whatever interrupts its request, the soft time limit
  included; that one belongs to the task and is given back unwrapped.
"""
import openai
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from contracts.bugs import bug


class ModelTimeout(Exception):
    """The model did not answer within the deadline."""


def _client() -> openai.OpenAI:
    timeout = None if bug("no-model-timeout") else settings.REVIEW_MODEL_TIMEOUT_S
    return openai.OpenAI(base_url=settings.OPENAI_BASE_URL, api_key=settings.OPENAI_API_KEY or "unset",
                         timeout=timeout, max_retries=0)


def ask(review_id: int, step: str, prompt: str) -> str:
    """The model's answer to ``prompt`` for step ``step`` of review ``review_id``."""
    headers = {} if bug("no-idempotency-key") else {"Idempotency-Key": f"review-{review_id}-{step}"}
    try:
        answer = _client().chat.completions.create(
            model=settings.REVIEW_MODEL, messages=[{"role": "user", "content": prompt}], extra_headers=headers)
    except openai.APITimeoutError as exc:
        raise ModelTimeout(f"no answer within {settings.REVIEW_MODEL_TIMEOUT_S:g}s") from exc
    except openai.APIConnectionError as exc:
        if isinstance(exc.__cause__, SoftTimeLimitExceeded):
            raise exc.__cause__ from None
        raise
    return answer.choices[0].message.content or ""
