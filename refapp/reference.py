"""The category table, cached for the life of the process.

It is static reference data (a few rows, changed only by migrations), so
reading it once per document would be a full scan per row for nothing. The
cache is keyed by ``reference_versions.version``, which a trigger bumps on
every change; each process looks at that version at most once per
``reference_recheck`` budget, and ``invalidate()`` drops the cache at once
in the process that made a change.
"""
from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass

import sqlalchemy as sa

from refapp import budgets
from refapp.db import categories as categories_table
from refapp.db import engine, reference_versions
from refapp.mutants import mutant


@dataclass(frozen=True)
class Category:
    """One category and the words that suggest it."""

    name: str
    keywords: tuple[str, ...]


_lock = threading.Lock()
_version: int | None = None
_checked_at = float("-inf")


def categories() -> tuple[Category, ...]:
    """Every category, by name."""
    if mutant("reference-table-rescan"):
        return _read_categories()  # the wrong shape: one full scan per document
    return _categories_at(_current_version())


def names() -> frozenset[str]:
    """The category names."""
    return frozenset(c.name for c in categories())


def invalidate() -> None:
    """Forget the cached table (call after changing it in this process)."""
    global _checked_at
    with _lock:
        _checked_at = float("-inf")
    _categories_at.cache_clear()


def _current_version() -> int:
    global _version, _checked_at
    with _lock:
        if _version is None or time.monotonic() - _checked_at >= budgets.scaled("reference_recheck"):
            with engine().connect() as conn:
                _version = int(conn.scalar(sa.select(reference_versions.c.version)
                                           .where(reference_versions.c.name == "categories")) or 0)
            _checked_at = time.monotonic()
        return _version


@functools.lru_cache(maxsize=1)  # one version at a time: a new version evicts the old table
def _categories_at(version: int) -> tuple[Category, ...]:
    return _read_categories()


def _read_categories() -> tuple[Category, ...]:
    with engine().connect() as conn:
        rows = conn.execute(sa.select(categories_table.c.name, categories_table.c.keywords)
                            .order_by(categories_table.c.name)).all()
    return tuple(Category(name=r.name, keywords=tuple(r.keywords.split())) for r in rows)
