"""The engine, the session factory, and the request-scoped session of the API."""
from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import create_engine
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

from recaps.config import get_settings

settings = get_settings()
engine = create_engine(settings.database_url, pool_size=settings.db_pool_size, max_overflow=0,
                       pool_timeout=settings.db_pool_timeout_s, pool_pre_ping=True)
SessionLocal = sessionmaker(bind=engine)


class Base(DeclarativeBase):
    pass


def get_db() -> Iterator[Session]:
    db = SessionLocal()
    try:
        yield db
    finally:
        db.close()
