"""Logging for refapp's own processes (Celery workers configure theirs)."""
from __future__ import annotations

import logging
import sys


def setup(process: str) -> None:
    """Log INFO and up to stderr, each line naming the process."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO,
        format=f"%(asctime)s {process}[%(process)d] %(levelname)s %(name)s: %(message)s",
    )
