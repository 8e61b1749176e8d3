"""What the API takes and gives back."""
from __future__ import annotations

from pydantic import BaseModel, Field


class RecapRequest(BaseModel):
    title: str = Field(max_length=300)
    transcript: str = Field(min_length=1)
    language: str = "en"


class RecapOut(BaseModel):
    id: str
    status: str
    error: str | None = None
    summary: str | None = None
    action_items: list[str] | None = None
