"""The per-item loop every batch job shares: one bad item is its own problem, a deadline is everyone's.

Two kinds of exception reach the loop. An item's failure (a provider error,
a bad CSV row) is recorded against that item and the batch goes on. An
abort (Celery's soft time limit, the attempt being declared dead, the user
cancelling) is not the current item's fault: the soft limit finalises the
job as "timed out after i of n" and is re-raised, so the task leaves in the
window before the hard limit, which runs no cleanup code.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from celery.exceptions import SoftTimeLimitExceeded

from refapp import budgets, jobstore
from refapp.attempt import FAILED, Attempt, AttemptAbandoned, JobCancelled
from refapp.failpoints import TASK_ITEM, failpoint
from refapp.mutants import mutant

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Item:
    """One document or CSV row of a job."""

    idx: int
    payload: str


@dataclass(frozen=True)
class ItemOutcome:
    """What became of one item; ``reason`` starts with its label (``timeout:`` / ``error:``)."""

    ok: bool
    result: str | None = None
    reason: str | None = None
    retryable: bool = False

    @classmethod
    def done(cls, result: str) -> ItemOutcome:
        return cls(ok=True, result=result)

    @classmethod
    def failed(cls, reason: str, *, retryable: bool = False) -> ItemOutcome:
        return cls(ok=False, reason=reason, retryable=retryable)


Process = Callable[[Attempt, Item], ItemOutcome]


def run_batch(attempt: Attempt, batch: Sequence[Item], process: Process, *, noun: str) -> None:
    """Process every item, recording each outcome; aborts propagate."""
    for position, item in enumerate(batch):
        try:
            attempt.ensure_alive()
            failpoint(TASK_ITEM, **attempt.context(item=item.idx))
            outcome = _isolated(attempt, item, process)
            if not outcome.ok:  # said where an operator looks, not only in the item's row
                log.warning("job %s: item %s failed: %s", attempt.job_id, item.idx, outcome.reason)
            jobstore.record_item(attempt, item.idx, ok=outcome.ok, result=outcome.result,
                                 reason=outcome.reason, retryable=outcome.retryable)
        except SoftTimeLimitExceeded:
            # Not this item's fault. Record how far we got (the items before this one), then get
            # out of the way.
            finished = position + 1 if mutant("progress-off-by-one") else position  # mutant: the one in flight too
            finish_timed_out(attempt, finished, len(batch), noun)
            raise


def _isolated(attempt: Attempt, item: Item, process: Process) -> ItemOutcome:
    """Run one item: its own failure becomes its outcome, an abort belongs to the attempt."""
    try:
        return process(attempt, item)
    except SoftTimeLimitExceeded as abort:
        if not mutant("swallow-soft-limit"):
            raise
        log.exception("job %s: item %s failed", attempt.job_id, item.idx)  # the wrong shape
        return ItemOutcome.failed(f"error: {abort!r}")
    except (AttemptAbandoned, JobCancelled):
        raise
    except Exception as exc:  # noqa: BLE001 - per-item isolation: record it, go on
        log.exception("job %s: item %s failed", attempt.job_id, item.idx)
        return ItemOutcome.failed(f"error: {type(exc).__name__}: {exc}")


def finish_timed_out(attempt: Attempt, finished: int, total: int, noun: str) -> None:
    """Mark the job failed because its batch budget ran out (no-op if it is no longer ours)."""
    budget = budgets.scaled(budgets.task_budget_name("refapp.process_job"))
    reason = f"timeout: timed out after {finished} of {total} {noun} (batch budget {budget:g}s)"
    try:
        jobstore.finish(attempt, FAILED, reason)
    except AttemptAbandoned:
        log.info("job %s: attempt %s timed out after losing the job", attempt.job_id, attempt.token)
