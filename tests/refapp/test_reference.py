"""The category table is read once per process and again only after it changes."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from harness._wait import wait_until
from refapp import db, reference, settings
from tests.refapp.conftest import Stack


@pytest.fixture
def category_reads() -> Iterator[list[str]]:
    """Every statement this process sends that reads the categories table."""
    seen: list[str] = []

    def listen(conn, cursor, statement, *args) -> None:  # noqa: ANN001 - SQLAlchemy's event signature
        if "FROM categories" in statement:
            seen.append(statement)

    sa.event.listen(db.engine(), "before_cursor_execute", listen)
    yield seen
    sa.event.remove(db.engine(), "before_cursor_execute", listen)


def _set_keywords(name: str, keywords: str) -> None:
    with db.engine().begin() as conn:
        conn.execute(sa.update(db.categories).where(db.categories.c.name == name).values(keywords=keywords))


def test_many_documents_read_the_table_once(stack: Stack, category_reads: list[str]) -> None:
    reference.invalidate()

    for _ in range(50):
        reference.categories()

    assert len(category_reads) == 1


def test_a_change_is_seen_after_the_recheck_interval(stack: Stack) -> None:
    reference.categories()
    _set_keywords("other", "misc")
    try:
        wait_until(lambda: {c.name: c.keywords for c in reference.categories()}["other"] == ("misc",),
                   timeout=5, what="the new keywords")
    finally:
        _set_keywords("other", "")
        reference.invalidate()


def test_the_rescan_mutant_reads_the_table_every_time(stack: Stack, category_reads: list[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFAPP_MUTANT", "reference-table-rescan")
    settings.get.cache_clear()

    for _ in range(5):
        reference.categories()

    assert len(category_reads) == 5
