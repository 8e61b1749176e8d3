"""The one table: a job, its state, the reason of a failure, its attempt and when it was claimed."""
from __future__ import annotations

import psycopg

from loadapp.settings import libpq_url

TERMINAL = ("done", "failed")
DDL = """
CREATE TABLE IF NOT EXISTS load_jobs (
    id text PRIMARY KEY,
    state text NOT NULL DEFAULT 'queued',
    reason text,
    attempt integer NOT NULL DEFAULT 0,
    payload text NOT NULL,
    output text,
    created_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz
);
CREATE INDEX IF NOT EXISTS load_jobs_open ON load_jobs (state) WHERE state IN ('queued', 'running');
"""


def create_schema(url: str) -> None:
    """Create the table in the database at ``url``."""
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute(DDL)
