"""Per-document work: normalise the text (fast, deterministic), then ask the paid model for a category.

The paid step asks "already done?" before paying, sends an idempotency key
that is the same for every attempt at the same job and step, and saves the
answer under the attempt's fencing token.
"""
from __future__ import annotations

import logging
import re
import unicodedata

import sqlalchemy as sa
from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy.dialects.postgresql import insert as pg_insert

from refapp import model_client, reference
from refapp.attempt import Attempt, AttemptAbandoned, JobCancelled
from refapp.batch import Item, ItemOutcome
from refapp.db import engine, step_results
from refapp.failpoints import TASK_AFTER_PAID_CALL, TASK_BEFORE_PAID_CALL, failpoint
from refapp.model_client import ModelError, ModelTimeout
from refapp.mutants import mutant

log = logging.getLogger(__name__)

_SPACES = re.compile(r"\s+")


class UnknownCategory(ValueError):
    """The model answered with a category the reference table does not have."""


def normalise(text: str) -> str:
    """The stand-in for OCR: Unicode-normalised, lower-case, single-spaced."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().lower()


def build_prompt(text: str, categories: tuple[reference.Category, ...]) -> str:
    """The categorisation prompt for one normalised document."""
    choices = "\n".join(f"- {c.name}: {' '.join(c.keywords) or 'anything else'}" for c in categories)
    return f"Pick the one category that fits this document.\nCategories:\n{choices}\n\nDocument:\n{text}"


def idempotency_key(job_id: str, step: str, attempt: int) -> str:
    """The key the provider deduplicates on: one per job and step, whatever the attempt."""
    if attempt > 1 and mutant("fresh-idempotency-key"):
        return f"refapp:{job_id}:{step}:attempt-{attempt}"  # the wrong shape: a retry is a new call
    if mutant("idempotency-key-without-job"):
        return f"refapp:{step}"  # the wrong shape: every job's document 0 is the same call
    return f"refapp:{job_id}:{step}"


def step_name(item: Item) -> str:
    """The paid step of one document."""
    return f"doc-{item.idx}.categorise"


def process_document(attempt: Attempt, item: Item) -> ItemOutcome:
    """Normalise and categorise one document; provider failures become this item's outcome."""
    text = normalise(item.payload)
    try:
        category = categorise(attempt, step_name(item), text)
    except SoftTimeLimitExceeded as abort:
        if not mutant("helper-swallows-abort"):
            raise  # the deadline belongs to the whole batch, not to this document
        return ItemOutcome.failed(f"error: {abort!r}")  # the wrong shape: swallowed one level down
    except (AttemptAbandoned, JobCancelled):
        raise
    except ModelTimeout as exc:
        return ItemOutcome.failed(f"timeout: {exc}", retryable=True)
    except ModelError as exc:
        return ItemOutcome.failed(f"error: {exc}", retryable=True)
    except UnknownCategory as exc:
        return ItemOutcome.failed(f"error: {exc}")
    return ItemOutcome.done(category)


def categorise(attempt: Attempt, step: str, text: str) -> str:
    """The category of a document: the saved answer if this step is done, else a paid call."""
    prompt = build_prompt(text, reference.categories())
    failpoint(TASK_BEFORE_PAID_CALL, **attempt.context(step=step))
    saved = _before_paying(attempt, step)
    # the wrong shapes pay whatever the answer: only the save, after paying, notices the step was done
    if saved is not None and not (mutant("check-after-pay") or mutant("consumer-not-idempotent")):
        return saved
    answer = model_client.generate(prompt, key=idempotency_key(attempt.job_id, step, attempt.token),
                                   job_id=attempt.job_id, step=step, attempt=attempt.token)
    failpoint(TASK_AFTER_PAID_CALL, **attempt.context(step=step, call_id=answer.call_id))
    if answer.output not in reference.names():
        raise UnknownCategory(f"model answered {answer.output!r}, which is not a category")
    return _save(attempt, step, answer)


def _before_paying(attempt: Attempt, step: str) -> str | None:
    """Check this attempt still owns the job; the step's saved answer if it is already done."""
    with engine().begin() as conn:
        try:
            attempt.fence(conn)
        except (AttemptAbandoned, JobCancelled):
            if not mutant("pay-before-fence"):  # the wrong shape pays anyway: only the save is fenced
                raise
        this_step = step_results.c.step == step
        if not mutant("step-cache-ignores-job"):  # the wrong shape: any job's answer for this step
            this_step = sa.and_(step_results.c.job_id == attempt.job_id, this_step)
        return conn.scalar(sa.select(step_results.c.output).where(this_step).limit(1))


def _save(attempt: Attempt, step: str, answer: model_client.ModelAnswer) -> str:
    """Save the answer (fenced); if another attempt saved first, theirs stands."""
    with engine().begin() as conn:
        attempt.fence(conn)
        conn.execute(pg_insert(step_results).values(
            job_id=attempt.job_id, step=step, attempt=attempt.token, output=answer.output,
            call_id=answer.call_id).on_conflict_do_nothing())
        return conn.scalar(sa.select(step_results.c.output).where(
            step_results.c.job_id == attempt.job_id, step_results.c.step == step))
