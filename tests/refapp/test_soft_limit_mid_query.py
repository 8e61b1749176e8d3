"""A soft time limit that fires while a query runs stays a soft limit, and the pool stays usable.

Celery raises ``SoftTimeLimitExceeded`` from a signal handler, wherever the
task happens to be: under load, often inside a database call. psycopg is then
left with a command in progress, and the ``with engine().begin()`` block's
rollback fails with "another command is already in progress", an error that
would replace the abort: the job would end ``error:`` instead of
``timeout:``, and the broken connection would go back to the pool.
"""
from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from celery.exceptions import SoftTimeLimitExceeded

from refapp import db
from tests.refapp.conftest import Stack


@pytest.fixture
def soft_limit_in() -> Iterator[None]:
    """A soft limit raised by a signal 0.2 s from now, as Celery's pool raises it."""
    def abort(signum: int, frame: object) -> None:
        raise SoftTimeLimitExceeded()

    previous = signal.signal(signal.SIGALRM, abort)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_soft_limit_inside_a_query_is_raised_as_itself(stack: Stack, soft_limit_in: None) -> None:
    with pytest.raises(SoftTimeLimitExceeded):
        with db.engine().begin() as conn:
            conn.execute(sa.text("SELECT pg_sleep(3)"))

    for _ in range(db.engine().pool.size() + 1):  # every pooled connection answers
        with db.engine().connect() as conn:
            assert conn.scalar(sa.text("SELECT 1")) == 1
