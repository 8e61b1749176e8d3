"""Entry point of refapp's polling processes (relay, sweeper): serve until SIGTERM / SIGINT."""
from __future__ import annotations

import logging
import signal
import threading
from typing import Callable

from refapp import logs, settings


def run_until_signalled(process: str, serve: Callable[[threading.Event], None]) -> int:
    """Set up logging and settings, say ``<process> ready`` (the harness waits for that line),
    then call ``serve(stop)``; SIGTERM or SIGINT sets ``stop``."""
    logs.setup(process)
    settings.for_process()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    logging.getLogger(f"refapp.{process}").info("%s ready", process)
    serve(stop)
    return 0
