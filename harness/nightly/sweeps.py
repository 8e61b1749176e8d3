"""The sweep workload of a nightly run: a scheduled batch job over many rows, beside the stream of jobs.

A poison row (the ``poison`` fault kind) only shows a bug when something
processes the rows: a sweep. So when a schedule draws poison rows, the
run also starts the app's sweep every ``sweep_every`` seconds through the
app's own ``trigger(run, round)`` (which adds fresh rows to sweep and
starts one sweep run), and at the end asks ``record(run)`` to record
each sweep run as a ``sweep`` event for the ``sweep_complete`` invariant.
Both callables come from ``[tool.jobquake.nightly]`` (``sweep``,
``sweep_record``). A round whose trigger raises is recorded and the
rounds go on: a refused trigger is the app's answer under a fault.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

SOURCE = "nightly"


@dataclass(frozen=True)
class SweepHooks:
    """How the harness drives an app's sweep: start a round, then record every sweep run at the end."""

    trigger: Callable[[Any, int], Any]
    record: Callable[[Any], Any]
    every: float = 5.0


class SweepLoop:
    """Calls ``trigger`` every ``every`` seconds in its own thread until stopped."""

    def __init__(self, run: Any, hooks: SweepHooks, every: float):
        self.run = run
        self.hooks = hooks
        self.every = every
        self.rounds = 0
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="nightly-sweep", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        started = time.monotonic()
        while not self._stop.wait(max(0.0, started + (self.rounds + 1) * self.every - time.monotonic())):
            try:
                self.hooks.trigger(self.run, self.rounds)
            except Exception as exc:  # noqa: BLE001 - the app's answer under a fault, recorded
                self.refused += 1
                self.run.history.record(SOURCE, "info", "sweep_round", data={"round": self.rounds,
                                                                            "error": repr(exc)})
            self.rounds += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def record(self) -> None:
        """Record the sweep runs as evidence (after the app settled)."""
        self.hooks.record(self.run)
