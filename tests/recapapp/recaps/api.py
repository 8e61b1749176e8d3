"""The HTTP API (``uvicorn recaps.api:app``)."""
from __future__ import annotations

from fastapi import Depends, FastAPI, HTTPException
from sqlalchemy.orm import Session

from recaps import service
from recaps.db import get_db
from recaps.models import Recap
from recaps.schemas import RecapOut, RecapRequest

app = FastAPI(title="recaps")


@app.get("/health")
def health() -> dict:
    return {"ok": True}


@app.post("/recaps", status_code=202, response_model=RecapOut)
def create_recap(body: RecapRequest, db: Session = Depends(get_db)) -> dict:
    recap = service.submit_recap(db, body)
    return {"id": recap.id, "status": recap.status.value}


@app.get("/recaps/{recap_id}", response_model=RecapOut)
def read_recap(recap_id: str, db: Session = Depends(get_db)) -> dict:
    recap = db.get(Recap, recap_id)
    if recap is None:
        raise HTTPException(status_code=404, detail="no such recap")
    return {"id": recap.id, "status": recap.status.value, "error": recap.error, "summary": recap.summary,
            "action_items": recap.action_items}
