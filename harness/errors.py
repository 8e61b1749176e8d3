"""The exception hierarchy: one base, subclasses that keep the object that failed."""
from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigError", "FaultError", "FaultWaitTimeout", "HarnessError", "MissingBinaryError", "ServiceError",
    "SettleTimeout", "WaitTimeout",
]


class HarnessError(Exception):
    """Base of every error jobquake raises on purpose."""


class ConfigError(HarnessError):
    """A configuration key is unknown or its value is invalid."""

    def __init__(self, message: str, *, key: str | None = None, source: str | None = None):
        super().__init__(message)
        self.key = key
        self.source = source


class WaitTimeout(HarnessError):
    """A wait reached its bound; ``seen`` is what was observed meanwhile (None: nothing to show)."""

    def __init__(self, message: str = "", *, seen: Any = None):
        super().__init__(message)
        self.seen = seen


class SettleTimeout(WaitTimeout):
    """Work was still pending at the settle bound; ``outcome`` (also ``seen``) lists it."""

    def __init__(self, outcome: Any):
        super().__init__(outcome.describe(), seen=outcome)
        self.outcome = outcome


class ServiceError(HarnessError):
    """A service could not be started, reached or controlled.

    The message names the service, its command and address; the log tail is
    attached as a note so the reader sees why without opening files.
    """

    def __init__(
        self,
        message: str,
        *,
        service: str,
        command: list[str] | str | None = None,
        address: str | None = None,
        log_tail: str | None = None,
    ):
        cmd = command if isinstance(command, str) or command is None else " ".join(command)
        parts = [f"[{service}] {message}"]
        if address:
            parts.append(f"address: {address}")
        if cmd:
            parts.append(f"command: {cmd}")
        super().__init__("\n".join(parts))
        self.service = service
        self.command = cmd
        self.address = address
        self.log_tail = log_tail
        if log_tail:
            self.add_note(f"last lines of the {service} log:\n{log_tail}")


class MissingBinaryError(ServiceError):
    """A system binary a service needs is not installed."""


class FaultError(HarnessError):
    """A fault could not be injected or healed."""

    def __init__(self, message: str, *, fault: str):
        super().__init__(f"fault {fault!r}: {message}")
        self.fault = fault


class FaultWaitTimeout(FaultError, WaitTimeout):
    """A fault's ``wait()`` reached its bound before the fault took place; ``seen`` says what did."""

    def __init__(self, message: str, *, fault: str, seen: Any = None):
        super().__init__(message, fault=fault)
        self.seen = seen
