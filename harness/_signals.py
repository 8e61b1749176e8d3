"""Turn SIGTERM, SIGHUP and SIGINT into one clean stop, as Ctrl-C is in pytest.

A CI job that times out sends SIGTERM; a closed terminal sends SIGHUP. By
default either ends the process at once, and every server and worker of the
run stays behind until some later run reaps it. Raised as a
``KeyboardInterrupt`` in the main thread instead, the signal takes the path
pytest already has for Ctrl-C: the session ends, fixtures are torn down, the
stack stops and the run folder goes. A repeated signal is ignored while that
clean-up runs (it is bounded: ``QUICK_STOP`` seconds per wave of services),
so a second Ctrl-C or a TERM sent to the whole process group cannot cut it
short and leave half the stack running.
"""
from __future__ import annotations

import signal
import threading
from typing import Any

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
QUICK_STOP = 0.5  # seconds a service may take to stop gracefully once the run was told to stop (then SIGKILL)


class Stopped(KeyboardInterrupt):
    """The run received a stop signal; ``signum`` says which."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


class StopOnSignal:
    """Installs the handlers (main thread only) and remembers whether a stop signal came."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> StopOnSignal:
        if threading.current_thread() is not threading.main_thread():
            return self  # signal handlers can only be set from the main thread
        for sig in STOP_SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def uninstall(self) -> None:
        previous, self._previous = self._previous, {}
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    @property
    def stopping(self) -> bool:
        return self.received is not None

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received is not None:
            return  # the clean-up of the first signal is running: let it finish
        self.received = signum
        raise Stopped(signum)
