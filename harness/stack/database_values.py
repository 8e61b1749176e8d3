"""The template values that name one database: its URL for SQLAlchemy and for libpq, and its parts.

Settings that take the database one part at a time (Django's ``DATABASES``
from ``POSTGRES_HOST``, ``POSTGRES_DB``...) use ``{database_host}``,
``{database_port}``, ``{database_name}``, ``{database_user}`` and
``{database_password}``; the stack fills them for the app's database, and
for the template database while the app's schema is made there. A database
reached through its private Unix socket names it in the URL's query
(``?host=/folder&port=N``, libpq's form): ``{database_host}`` is then that
folder, which Django and libpq take for a socket's. With ``proxied`` listing
postgres, both databases are reached through the fault proxy's TCP address
instead, for settings that build a URL from a host and a port.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


def database_values(url: str) -> dict[str, Any]:
    """``{database_url}``, ``{database_dsn}`` and the parts of the database at ``url``."""
    dsn = url.replace("postgresql+psycopg://", "postgresql://", 1)
    parts = urlsplit(dsn)
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    # for another driver: "postgresql+asyncpg://{database_address}" (user:password@host:port/database)
    return {"database_url": url, "database_dsn": dsn, "database_address": dsn.split("://", 1)[1],
            "database_host": parts.hostname or query.get("host", ""),
            "database_port": parts.port or query.get("port", ""), "database_name": parts.path.lstrip("/"),
            "database_user": unquote(parts.username or ""), "database_password": unquote(parts.password or "")}
