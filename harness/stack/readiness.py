"""Readiness checks written in config: ``http:/path``, ``log:<regex>``, ``tcp``.

A check is a single probe (no waiting); the service polls it with a deadline.
"""
from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from typing import Callable

from harness.errors import ConfigError
from harness.stack.probe_http import probe_client


@dataclass(frozen=True)
class ReadyCheck:
    """How to tell that a process is ready to serve."""

    kind: str  # "http", "log" or "tcp"
    arg: str = ""

    @classmethod
    def parse(cls, text: str) -> "ReadyCheck":
        kind, _, arg = text.partition(":")
        if kind == "http" and arg.startswith("/"):
            return cls("http", arg)
        if kind == "log" and arg:
            try:
                re.compile(arg)
            except re.error as exc:
                raise ConfigError(f"ready check {text!r}: bad regular expression: {exc}") from exc
            return cls("log", arg)
        if kind == "tcp" and not arg:
            return cls("tcp")
        raise ConfigError(f"ready check {text!r}: expected 'http:/path', 'log:<regex>' or 'tcp'")

    def probe(self, host: str, port: int, log_since_start: Callable[[], str]) -> bool:
        if self.kind == "http":
            return probe_client().get(f"http://{host}:{port}{self.arg}").is_success
        if self.kind == "log":
            return re.search(self.arg, log_since_start(), re.MULTILINE) is not None
        with socket.create_connection((host, port), timeout=1.0):
            return True

    def __str__(self) -> str:
        return f"{self.kind}:{self.arg}" if self.arg else self.kind
