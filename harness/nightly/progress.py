"""Progress while a nightly runs: plain periodic lines for logs, a live panel on a terminal.

Not a TTY (CI logs): one line every ``every`` seconds (and the last one),
e.g. ``[ 30s / 60s] jobs 150 submitted, 140 done, 2 failed, 8 in flight,
0 stuck | faults 4 injected, 1 active | invariants ok so far | duplicate
spend 0``. On a terminal, ``rich`` redraws the same figures in place.
"""
from __future__ import annotations

import sys
import time
from typing import IO, Any

from harness.nightly.monitor import Status


def line(status: Status, duration: float) -> str:
    """One plain line describing ``status``."""
    left = max(0.0, duration - status.elapsed)
    verdict = "ok so far" if not status.stuck and not status.duplicate_calls else \
        f"{status.stuck} stuck, {status.duplicate_calls} billed twice"
    text = (f"[{status.elapsed:5.0f}s / {duration:.0f}s, {left:.0f}s left] jobs {status.submitted} submitted, "
            f"{status.done} done, {status.failed} failed, {status.in_flight} in flight, {status.stuck} stuck"
            f" | faults {status.faults_injected} injected, {status.faults_active} active"
            f" | invariants {verdict} | duplicate spend {status.duplicate_calls}")
    if status.error:
        text += f" | job table unreadable: {status.error[:80]}"
    return text


class PlainProgress:
    """Prints a line every ``every`` seconds of run time."""

    def __init__(self, duration: float, out: IO[str] | None = None, every: float = 10.0):
        self.duration = duration
        self.out = out or sys.stdout
        self.every = every
        self._next = 0.0

    def __call__(self, status: Status) -> None:
        if status.elapsed + 1e-6 >= self._next:
            print(line(status, self.duration), file=self.out, flush=True)
            self._next = status.elapsed + self.every

    def close(self, status: Status | None = None) -> None:
        if status is not None:
            print(line(status, self.duration), file=self.out, flush=True)


class LiveProgress:
    """A ``rich`` panel redrawn on every tick."""

    def __init__(self, duration: float, title: str = "jobquake nightly"):
        from rich.console import Console
        from rich.live import Live

        self.duration = duration
        self.title = title
        self.started = time.monotonic()
        self.live = Live(self._render(Status()), console=Console(), refresh_per_second=4)
        self.live.start()

    def _render(self, status: Status) -> Any:
        from rich.progress_bar import ProgressBar
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        table.add_row("time", f"{status.elapsed:.0f}s of {self.duration:.0f}s",
                      ProgressBar(total=self.duration, completed=min(status.elapsed, self.duration), width=30))
        table.add_row("jobs", f"{status.submitted} submitted  {status.done} done  {status.failed} failed",
                      f"{status.in_flight} in flight  [bold red]{status.stuck} stuck[/]" if status.stuck
                      else f"{status.in_flight} in flight  0 stuck")
        table.add_row("faults", f"{status.faults_injected} injected", f"{status.faults_active} active")
        ok = not status.stuck and not status.duplicate_calls
        table.add_row("invariants", "[green]ok so far[/]" if ok else "[bold red]violated[/]",
                      f"duplicate spend {status.duplicate_calls}")
        table.title = self.title
        return table

    def __call__(self, status: Status) -> None:
        self.live.update(self._render(status))

    def close(self, status: Status | None = None) -> None:
        if status is not None:
            self.live.update(self._render(status))
        self.live.stop()


def progress_for(duration: float, out: IO[str] | None = None, title: str = "jobquake nightly") -> Any:
    """A live panel when ``out`` is a terminal and ``rich`` is installed, else plain lines."""
    out = out or sys.stdout
    if out.isatty():
        try:
            return LiveProgress(duration, title)
        except ImportError:
            pass
    return PlainProgress(duration, out)
