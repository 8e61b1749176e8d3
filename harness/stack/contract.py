"""The Service contract: what every backend (process, docker) offers for every service.

Scenarios and faults speak to services only through this protocol, so the
same scenario runs against local processes or containers.
"""
from __future__ import annotations

import signal
from typing import Protocol, runtime_checkable


@runtime_checkable
class Service(Protocol):
    """A server the harness starts, breaks and restores."""

    name: str

    def start(self) -> None:
        """Start and block until ready; raise ServiceError (with log tail) if it never is."""

    def stop(self, timeout: float = 10.0) -> None:
        """Stop gracefully, then forcibly after ``timeout``. Idempotent."""

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the service (its whole process group / container)."""

    def pause(self) -> None:
        """Freeze the service (SIGSTOP / docker pause): connections stay open, nothing answers."""

    def resume(self) -> None:
        """Undo pause()."""

    def restart(self) -> None:
        """Stop (or reap after a kill) and start again on the same address."""

    def is_running(self) -> bool:
        """True while the service's process / container is alive (paused counts as alive)."""

    def is_ready(self) -> bool:
        """One readiness probe, no waiting."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def url(self) -> str:
        """The URL clients use (scheme depends on the service)."""

    def logs(self, tail: int | None = None) -> str:
        """The service's log output (the last ``tail`` lines when given)."""
