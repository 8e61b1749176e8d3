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
    """The ``celery worker`` command line."""
    argv = [sys.executable, "-m", "celery", "-A", "refapp.celery_app", "worker",
            "--pool", "prefork", "--concurrency", str(config.worker_concurrency),
            "--queues", QUEUE, "--hostname", f"refapp-{os.getpid()}@%h",
            "--without-mingle", "--without-gossip", "--without-heartbeat", "--loglevel", "INFO"]
    if mutant("cli-budget-wins"):
        # the wrong shape: a budget nobody chose, beating the declared default
        argv += ["--soft-time-limit", f"{BLANKET_SOFT_LIMIT * config.time_scale:g}"]
    return argv + extra


def main(argv: list[str] | None = None) -> None:
    """Check the settings, then become the Celery worker (same pid, same process group)."""
    config = settings.for_process()  # an unknown mutant or bad setting stops us here, not in a child
    args = worker_argv(config, list(sys.argv[1:] if argv is None else argv))
    os.execv(args[0], args)


if __name__ == "__main__":
    main()
