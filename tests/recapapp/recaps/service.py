"""Taking a recap request: save the row, then queue the work. Shared by the API and the CLI."""
from __future__ import annotations

import logging
import uuid

from sqlalchemy.orm import Session

from recaps.bugs import bug
from recaps.models import Recap, RecapStatus
from recaps.schemas import RecapRequest
from recaps.tasks import summarise_recap

log = logging.getLogger(__name__)


def submit_recap(db: Session, request: RecapRequest) -> Recap:
    """Save a new recap and queue its summary; the saved recap.

    The task is queued with the id kept here, not read back from the row:
    after the commit the session may need a connection again to read it,
    and a pool that ran dry must not keep a saved recap from being queued.
    The sweeper queues again what a broker outage left pending.
    """
    recap_id = str(uuid.uuid4())
    recap = Recap(id=recap_id, title=request.title, transcript=request.transcript, language=request.language,
                  status=RecapStatus.PENDING)
    db.add(recap)
    db.commit()
    if bug("refresh-before-publish"):
        db.refresh(recap)
        recap_id = recap.id
    summarise_recap.delay(recap_id)
    log.info("recap %s queued", recap_id)
    return recap
