"""This process's database engine: small pool, short wait, pings before use."""
from __future__ import annotations

from sqlalchemy import Engine, create_engine

from tickets import settings

_engine: Engine | None = None


def engine() -> Engine:
    global _engine
    if _engine is None:
        _engine = create_engine(settings.database_url(), pool_size=2, max_overflow=0,
                                pool_timeout=settings.pool_timeout_s(), pool_pre_ping=True)
    return _engine
