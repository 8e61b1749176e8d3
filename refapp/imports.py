"""Per-row work of a CSV import: parse, categorise by keyword, book the ledger entry.

A row that cannot be parsed is that row's failure ("row 7: amount 'abc' is
not a number"); the import goes on. Booking is idempotent per (job, row), so
a repeated attempt books nothing twice.
"""
from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal, InvalidOperation

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, array
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection

from refapp import reference
from refapp.attempt import Attempt
from refapp.batch import Item, ItemOutcome
from refapp.db import categories, engine, ledger_entries
from refapp.mutants import mutant

HEADER = ("date", "amount", "description")


class RowError(ValueError):
    """A CSV row that cannot be booked as written."""


def parse_row(line: str) -> tuple[dt.date, Decimal, str]:
    """(date, amount, description) of one CSV line."""
    fields = next(csv.reader([line]), [])
    if len(fields) != len(HEADER):
        raise RowError(f"expected {len(HEADER)} fields ({', '.join(HEADER)}), found {len(fields)}")
    raw_date, raw_amount, description = (f.strip() for f in fields)
    try:
        booked_on = dt.date.fromisoformat(raw_date)
    except ValueError:
        raise RowError(f"date {raw_date!r} is not YYYY-MM-DD") from None
    try:
        amount = Decimal(raw_amount)
    except InvalidOperation:
        raise RowError(f"amount {raw_amount!r} is not a number") from None
    if not amount.is_finite():
        raise RowError(f"amount {raw_amount!r} is not a number")
    return booked_on, amount, description


def category_for(description: str, categories: tuple[reference.Category, ...]) -> str:
    """The first category one of whose keywords appears in the description, else 'other'."""
    words = set(description.lower().split())
    for category in categories:
        if words.intersection(category.keywords):
            return category.name
    return "other"


def process_row(attempt: Attempt, item: Item) -> ItemOutcome:
    """Book one CSV row."""
    try:
        booked_on, amount, description = parse_row(item.payload)
    except RowError as exc:
        return ItemOutcome.failed(f"error: row {item.idx + 1}: {exc}")
    # the cached category table: the wrong shape asks the database to match the keywords, row by row
    category = (_category_by_query(description) if mutant("import-category-query-per-row")
                else category_for(description, reference.categories()))
    with engine().begin() as conn:
        attempt.fence(conn)
        if mutant("import-dedupe-scans-ledger") and _booked_already(conn, booked_on, amount, description):
            return ItemOutcome.done(category)  # the wrong shape: one scan of the whole ledger per row
        conn.execute(pg_insert(ledger_entries).values(
            job_id=attempt.job_id, row_no=item.idx, booked_on=booked_on, amount=amount,
            description=description, category=category).on_conflict_do_nothing())
    return ItemOutcome.done(category)


def _category_by_query(description: str) -> str:
    """The category the database finds for the description's words (mutant import-category-query-per-row)."""
    words = sorted(set(description.lower().split()))
    with engine().connect() as conn:
        found = conn.scalar(sa.select(categories.c.name)
                            .where(sa.func.string_to_array(categories.c.keywords, " ").op("&&")(
                                sa.cast(array(words or [""]), ARRAY(sa.Text))))
                            .order_by(categories.c.name).limit(1))
    return found or "other"


def _booked_already(conn: Connection, booked_on: dt.date, amount: Decimal, description: str) -> bool:
    """The same entry is in the ledger already, from any import (mutant import-dedupe-scans-ledger)."""
    return conn.scalar(sa.select(sa.literal(True)).where(
        ledger_entries.c.booked_on == booked_on, ledger_entries.c.amount == amount,
        ledger_entries.c.description == description).limit(1)) is not None
