"""The app's settings, from its environment (filled by ``[tool.jobquake.env]``)."""
from __future__ import annotations

import os


def libpq_url(url: str) -> str:
    """``url`` as libpq reads it: an SQLAlchemy driver suffix (``postgresql+psycopg://``) dropped."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme.split('+')[0]}{sep}{rest}"


DATABASE_URL = libpq_url(os.environ.get("LOADAPP_DATABASE_URL", "postgresql://localhost/loadapp"))
REDIS_URL = os.environ.get("LOADAPP_REDIS_URL", "redis://localhost:6379/0")
PAIDAPI_URL = os.environ.get("LOADAPP_PAIDAPI_URL", "http://127.0.0.1:8080")
QUEUE = "loadapp:jobs"
# the paid call's deadline: a hanging provider fails the job with reason "timeout" after it
CALL_TIMEOUT_S = float(os.environ.get("LOADAPP_CALL_TIMEOUT_S", "1.5"))
# a job claimed longer ago than this has lost its worker (the call's deadline plus a margin)
STALE_AFTER_S = float(os.environ.get("LOADAPP_STALE_AFTER_S", "3"))
# a job queued longer ago than this was never taken (its id did not reach the list)
QUEUED_TOO_LONG_S = float(os.environ.get("LOADAPP_QUEUED_TOO_LONG_S", "5"))
SWEEP_EVERY_S = float(os.environ.get("LOADAPP_SWEEP_EVERY_S", "1"))
WORKER_THREADS = int(os.environ.get("LOADAPP_WORKER_THREADS", "16"))
