"""The Celery tasks: summarise one recap; sweep the ones whose worker died.

A recap may be summarised twice (the broker hands out again what a dead
worker held, the sweeper queues it again): each step is saved once done and
skipped when it is, and each model call repeats its idempotency key.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import select
from sqlalchemy.orm import Session

from recaps import llm
from recaps.bugs import bug
from recaps.config import get_settings
from recaps.db import SessionLocal
from recaps.models import Recap, RecapStatus
from recaps.worker import celery_app

log = logging.getLogger(__name__)
FINAL = (RecapStatus.COMPLETED, RecapStatus.FAILED)


@celery_app.task(bind=True, name="recaps.summarise", soft_time_limit=240, time_limit=300)
def summarise_recap(self, recap_id: str) -> None:
    """Summarise one recap; it ends completed, or failed with ``timeout: ...`` / ``error: ...``."""
    with SessionLocal() as db:
        recap = _claim(db, recap_id)
        if recap is None:
            return
        try:
            _work(db, recap, attempt=recap.attempts)
        except SoftTimeLimitExceeded:
            _fail(db, recap, "timeout: the recap took longer than its time limit")
        except llm.ModelTimeout as exc:
            _fail(db, recap, f"timeout: {exc}")
        except Exception as exc:  # noqa: BLE001 - any other failure is the recap's outcome, said plainly
            log.exception("recap %s failed", recap_id)
            _fail(db, recap, f"error: {exc!r}")


def _claim(db: Session, recap_id: str) -> Recap | None:
    recap = db.get(Recap, recap_id, with_for_update=True)
    if recap is None or recap.status in FINAL:
        log.info("recap %s: nothing to do", recap_id)
        db.rollback()
        return None
    if recap.status == RecapStatus.PROCESSING and recap.updated_at > _stale_cutoff():
        log.info("recap %s: another worker has it", recap_id)
        db.rollback()
        return None
    if recap.attempts >= get_settings().max_attempts:
        _fail(db, recap, f"gave up after {recap.attempts} attempts")
        return None
    recap.status = RecapStatus.PROCESSING
    recap.attempts += 1
    db.commit()
    return recap


def _work(db: Session, recap: Recap, *, attempt: int) -> None:
    keys = f"recap-{recap.id}-attempt-{attempt}" if bug("key-per-attempt") else f"recap-{recap.id}"
    if recap.summary is None:
        recap.summary = llm.summarise(recap.language, recap.transcript, key=f"{keys}-summary")
        db.commit()
    recap.action_items = llm.action_items(recap.summary, key=f"{keys}-actions")
    recap.status = RecapStatus.COMPLETED
    db.commit()


def _fail(db: Session, recap: Recap, why: str) -> None:
    db.rollback()
    recap.status = RecapStatus.FAILED
    recap.error = why
    db.commit()


@celery_app.task(name="recaps.sweep")
def sweep_stale_recaps() -> dict[str, int]:
    """Recaps nobody works on any more: queued again, or failed after too many attempts.

    Each is handled in a savepoint of its own, so one that cannot be handled
    is failed with the reason and the others still go.
    """
    cutoff = _stale_cutoff()
    requeue: list[str] = []
    failed = 0
    with SessionLocal() as db:
        stale = db.scalars(select(Recap).where(Recap.status.in_([RecapStatus.PENDING, RecapStatus.PROCESSING]),
                                               Recap.updated_at < cutoff)
                           .order_by(Recap.created_at).with_for_update(skip_locked=True)).all()
        for recap in stale:
            if bug("sweep-one-transaction"):
                _sweep_one(recap, requeue)
                continue
            try:
                with db.begin_nested():
                    _sweep_one(recap, requeue)
            except Exception as exc:  # noqa: BLE001 - one bad recap fails alone
                log.exception("sweep: recap %s cannot be queued again", recap.id)
                recap.status, recap.error = RecapStatus.FAILED, f"sweeper: cannot queue again: {exc!r}"
                failed += 1
        db.commit()
    for recap_id in requeue:
        summarise_recap.delay(recap_id)
    if failed:
        log.warning("sweep: requeued=%d failed=%d", len(requeue), failed)
    return {"requeued": len(requeue), "failed": failed}


def _stale_cutoff() -> datetime:
    """Rows in progress untouched since then have lost their worker."""
    return datetime.now(timezone.utc) - timedelta(seconds=get_settings().stale_after_s)


def _sweep_one(recap: Recap, requeue: list[str]) -> None:
    if recap.attempts >= get_settings().max_attempts:
        recap.status, recap.error = RecapStatus.FAILED, f"gave up after {recap.attempts} attempts: its worker stopped"
        return
    llm.prompt_for(recap.language, "")  # a recap in a language without a prompt cannot be summarised
    recap.status = RecapStatus.PENDING
    requeue.append(recap.id)
