"""The review task and the sweep that rescues reviews nobody works on.

A review may run more than once (late acks, the sweep sending it again):
the claim only takes a review that is queued, or one whose heartbeat is
older than any live attempt's; each paid step is saved and never paid for
again; the final write lands only while this attempt still owns the review.
"""
import logging
from datetime import timedelta

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from contracts import llm
from contracts.bugs import bug
from contracts.models import ContractReview, ReviewStep

log = logging.getLogger(__name__)
Status = ContractReview.Status
# how soon each tier's customers expect an answer (Celery priority, higher first)
TIER_PRIORITY = {ContractReview.Tier.STANDARD: 5, ContractReview.Tier.EXPRESS: 9}
CLAUSE_PROMPT = "List the risks for the client in this contract clause, one per line:\n\n{clause}"
SUMMARY_PROMPT = "Summarise the risks of the contract {title!r} for a lawyer in three sentences:\n\n{risks}"


@shared_task(soft_time_limit=settings.REVIEW_SOFT_LIMIT_S, time_limit=settings.REVIEW_HARD_LIMIT_S)
def review_contract(review_id: int) -> None:
    """Review one contract; it ends reviewed, failed (``timeout:`` / ``error:``) or needs_lawyer."""
    review = _claim(review_id)
    if review is None:
        log.info("review %s: done already, or another worker has it", review_id)
        return
    if review.attempts > settings.REVIEW_MAX_ATTEMPTS:
        _finish(review, Status.NEEDS_LAWYER, reason=f"gave up after {review.attempts - 1} attempts")
        return
    try:
        risks = _assess_clauses(review)
        summary = _step(review, "summary", SUMMARY_PROMPT.format(title=review.title, risks="\n".join(risks)))
    except SoftTimeLimitExceeded:
        _finish(review, Status.FAILED, reason="timeout: the review's time limit passed")
        return
    except llm.ModelTimeout as exc:
        _finish(review, Status.FAILED, reason=f"timeout: {exc}")
        return
    except Exception as exc:  # any other failure is the review's outcome, said plainly
        _finish(review, Status.FAILED, reason=f"error: {exc!r}")
        return
    _finish(review, Status.REVIEWED, summary=summary)


def _assess_clauses(review: ContractReview) -> list[str]:
    """Each clause's risks; a clause the model cannot assess is noted and the others go on."""
    risks = []
    for i, clause in enumerate(review.clauses):
        try:
            risks.append(_step(review, f"clause-{i}", CLAUSE_PROMPT.format(clause=clause)))
        except llm.ModelTimeout:
            raise  # the provider stopped answering: the next clause would wait as long
        except SoftTimeLimitExceeded:
            if not bug("swallow-soft-limit"):
                raise  # not this clause's fault: the review is out of time
            log.exception("review %s: clause %d could not be assessed", review.pk, i)
            risks.append(f"clause {i}: not assessed")
        except Exception:
            log.exception("review %s: clause %d could not be assessed", review.pk, i)
            risks.append(f"clause {i}: not assessed")
    return risks


def _step(review: ContractReview, name: str, prompt: str) -> str:
    """One paid step: its saved answer if an earlier attempt paid for it, else the model's (saved)."""
    saved = ReviewStep.objects.filter(review=review, name=name).first()
    if saved is not None:
        return saved.output
    output = llm.ask(review.pk, name, prompt)
    ReviewStep.objects.get_or_create(review=review, name=name,
                                     defaults={"output": output, "attempt": review.attempts})
    ContractReview.objects.filter(pk=review.pk, attempts=review.attempts).update(heartbeat_at=timezone.now())
    return output


def _claim(review_id: int) -> ContractReview | None:
    stale = timezone.now() - timedelta(seconds=settings.REVIEW_STALE_AFTER_S)
    with transaction.atomic():
        review = ContractReview.objects.select_for_update().filter(pk=review_id).first()
        if review is None or not (review.status == Status.QUEUED or (
                review.status == Status.REVIEWING and review.heartbeat_at is not None
                and review.heartbeat_at < stale)):
            return None
        review.status, review.attempts = Status.REVIEWING, review.attempts + 1
        review.heartbeat_at, review.failure_reason = timezone.now(), ""
        review.save(update_fields=["status", "attempts", "heartbeat_at", "failure_reason", "updated_at"])
    return review


def _finish(review: ContractReview, status: str, *, reason: str = "", summary: str = "") -> None:
    landed = ContractReview.objects.filter(pk=review.pk, attempts=review.attempts, status=Status.REVIEWING).update(
        status=status, failure_reason=reason, summary=summary, heartbeat_at=timezone.now(),
        updated_at=timezone.now())
    if not landed:
        log.warning("review %s: attempt %s no longer owns it; %s not saved", review.pk, review.attempts, status)


# -- the sweep (celery beat: CELERY_BEAT_SCHEDULE) --------------------------------------
@shared_task
def sweep_stale_reviews() -> None:
    """Send again every review that lost its worker or its message; one transaction per review."""
    now = timezone.now()
    lost = (Q(status=Status.REVIEWING, heartbeat_at__lt=now - timedelta(seconds=settings.REVIEW_STALE_AFTER_S))
            | Q(status=Status.QUEUED, updated_at__lt=now - timedelta(seconds=settings.REVIEW_QUEUED_TOO_LONG_S)))
    ids = list(ContractReview.objects.filter(lost).order_by("pk").values_list("pk", flat=True)[:500])
    if not ids:
        return
    if bug("sweep-one-transaction"):
        with transaction.atomic():
            for review_id in ids:
                _send_again(review_id)
        return
    failed = 0
    for review_id in ids:
        try:
            with transaction.atomic():
                _send_again(review_id)
        except Exception as exc:  # one bad review must not keep the others waiting
            failed += 1
            log.exception("sweep: review %s could not be sent again", review_id)
            _hand_to_lawyer(review_id, f"error: the sweep could not send it again: {exc!r}")
    if failed:
        log.warning("sweep: processed=%d failed=%d", len(ids) - failed, failed)


def _send_again(review_id: int) -> None:
    review = ContractReview.objects.select_for_update(skip_locked=True).filter(pk=review_id).first()
    if review is None or review.status not in (Status.QUEUED, Status.REVIEWING):
        return  # a live attempt holds it, or it ended meanwhile
    priority = TIER_PRIORITY[review.tier]
    if review.attempts >= settings.REVIEW_MAX_ATTEMPTS:
        review.status, review.failure_reason = Status.NEEDS_LAWYER, f"gave up after {review.attempts} attempts"
        review.save(update_fields=["status", "failure_reason", "updated_at"])
        return
    review.status = Status.QUEUED
    review.save(update_fields=["status", "updated_at"])
    transaction.on_commit(lambda: review_contract.apply_async(args=[review_id], priority=priority))


def _hand_to_lawyer(review_id: int, reason: str) -> None:
    ContractReview.objects.filter(pk=review_id, status__in=[Status.QUEUED, Status.REVIEWING]).update(
        status=Status.NEEDS_LAWYER, failure_reason=reason, updated_at=timezone.now())
