"""The template values that name one database: its URL for SQLAlchemy and for libpq, and its parts.

Settings that take the database one part at a time (Django's ``DATABASES``
from ``POSTGRES_HOST``, ``POSTGRES_DB``...) use ``{database_host}``,
``{database_port}``, ``{database_name}``, ``{database_user}`` and
``{database_password}``; the stack fills them for the app's database, and
for the template database while the app's schema is made there.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit


def database_values(url: str) -> dict[str, Any]:
    """``{database_url}``, ``{database_dsn}`` and the parts of the database at ``url``."""
    dsn = url.replace("postgresql+psycopg://", "postgresql://", 1)
    parts = urlsplit(dsn)
    return {"database_url": url, "database_dsn": dsn, "database_host": parts.hostname or "",
            "database_port": parts.port or "", "database_name": parts.path.lstrip("/"),
            "database_user": unquote(parts.username or ""), "database_password": unquote(parts.password or "")}
