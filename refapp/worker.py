"""``python -m refapp.worker``: run a Celery worker for refapp (prefork, the only pool with time limits).

Extra arguments are passed to ``celery worker`` (e.g. ``--concurrency 4``).
The command sets no time limit: budgets are declared in ``budgets.py``.
"""
from __future__ import annotations

import os
import sys

from refapp import settings
from refapp.celery_app import QUEUE
from refapp.mutants import mutant

BLANKET_SOFT_LIMIT = 120.0  # real seconds: the flag an entrypoint script once defaulted to


def worker_argv(config: settings.Settings, extra: list[str]) -> list[str]:
    """The ``celery`` command's arguments."""
    argv = ["-A", "refapp.celery_app", "worker",
            "--pool", "prefork", "--concurrency", str(config.worker_concurrency),
            "--queues", QUEUE, "--hostname", f"refapp-{os.getpid()}@%h",
            "--without-mingle", "--without-gossip", "--without-heartbeat", "--loglevel", "INFO"]
    if mutant("cli-budget-wins"):
        # the wrong shape: a budget nobody chose, beating the declared default
        argv += ["--soft-time-limit", f"{BLANKET_SOFT_LIMIT * config.time_scale:g}"]
    return argv + extra


def main(argv: list[str] | None = None) -> None:
    """Check the settings, then run ``celery worker`` in this process (same pid, same process group).

    ``python -m celery`` in this interpreter rather than an ``exec`` of a new one, which would
    import Celery and refapp again: about 0.15 CPU-s more at every worker start. Its exit
    status, usage errors and ``CELERY_`` variables are the command's own.
    """
    config = settings.for_process()  # an unknown mutant or bad setting stops us here, not in a child
    sys.argv = ["celery", *worker_argv(config, list(sys.argv[1:] if argv is None else argv))]
    from celery.__main__ import main as celery_main

    celery_main()  # exits with the worker's status


if __name__ == "__main__":
    main()
