"""Rows that fail inside the database, not in Python, for the poison-row scenarios.

A Python error in one row's work leaves the database transaction as it
was. A statement the database refuses (a constraint, a lock it cannot get,
a value too big for its column) aborts the transaction it ran in: every
later statement in it fails, and its commit rolls back everything before.
An app that gives each row its own transaction (or a savepoint) loses one
row; an app that shares one transaction across rows loses them all.
"""
from __future__ import annotations

from typing import Any

from scenarios.sweep_support import past_due_date

# The customer of the invoice that breaks the constraint below (empty: a row from before the rule).
NO_CUSTOMER = ""


def invoice_breaking_a_later_constraint(conn: Any) -> dict[str, Any]:
    """A past-due invoice that a constraint added later (``NOT VALID``: old rows unchecked) forbids to change.

    The migration says an invoice can only leave ``open`` with a customer
    to write to. This old invoice has none: marking it overdue violates the
    constraint inside the database. For ``poison_row(insert=...)``.
    """
    conn.execute("ALTER TABLE invoices ADD CONSTRAINT dunning_needs_a_customer "
                 "CHECK (status = 'open' OR customer <> '') NOT VALID")
    conn.execute("INSERT INTO invoices (customer, amount, due_on) VALUES (%s, %s, %s)",
                 (NO_CUSTOMER, "250.00", past_due_date()))
    return {"customer": NO_CUSTOMER}


# CSV rows for an import: refapp books each as a ledger entry with an amount of type numeric(12, 2).
GOOD_ROWS = ("2026-03-01,12.50,train ticket", "2026-03-02,89.00,hotel receipt paid",
             "2026-03-04,1200.00,invoice payable to ACME")
NOT_A_NUMBER = "2026-03-03,twelve,lunch receipt"  # fails in Python, before the database sees it
TOO_BIG = "2026-03-05,123456789012.00,invoice for the whole building"  # 12 digits: numeric overflow in the database


def csv_text(*rows: str) -> str:
    """An import's CSV, header first."""
    return "\n".join(("date,amount,description", *rows))
