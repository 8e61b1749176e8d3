"""Taking a new review: the row and its message must not part ways."""
import logging

from django.db import transaction

from contracts.bugs import bug
from contracts.models import ContractReview
from contracts.tasks import review_contract

log = logging.getLogger(__name__)


def submit_review(title: str, clauses: list[str], tier: str = ContractReview.Tier.STANDARD) -> int:
    """Save a new review and queue it once the row is committed; its id."""
    if tier not in ContractReview.Tier.values:
        raise ValueError(f"unknown tier {tier!r}; known: {', '.join(ContractReview.Tier.values)}")
    if bug("queue-after-save"):
        return _save_then_queue(title, clauses, tier)
    with transaction.atomic():
        review = ContractReview.objects.create(title=title, clauses=clauses, tier=tier)
        if bug("enqueue-in-transaction"):
            review_contract.delay(review.pk)
        else:
            # a worker must find the row: queue it only once the row is there for everyone
            transaction.on_commit(lambda: review_contract.delay(review.pk))
    return review.pk


def _save_then_queue(title: str, clauses: list[str], tier: str) -> int:
    """The bug: the row is committed first, then the review is sent in a second step that reads
    the database again (the queue length, for the log) outside the transaction and its on_commit."""
    with transaction.atomic():
        review = ContractReview.objects.create(title=title, clauses=clauses, tier=tier)
    try:
        waiting = ContractReview.objects.filter(status=ContractReview.Status.QUEUED).count()
        review_contract.delay(review.pk)
        log.info("review %s queued (%d waiting)", review.pk, waiting)
    except Exception:  # "the review is saved; the sweep will catch up"
        log.exception("review %s saved but not queued", review.pk)
    return review.pk
