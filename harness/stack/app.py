"""Processes of the app under test (API server, relay, consumer, sweeper...), from config.

The command is a template: ``{port}``, ``{name}`` and every stack value
(``{redis_url}``, ``{database_url}``...) are filled in per argument, after
shell-style splitting, so values never need quoting. A leading ``python`` or
a console script such as ``celery`` resolves to the interpreter running the
harness, so the app runs in the same environment.
"""
from __future__ import annotations

import shlex
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO, Mapping

from harness.errors import ConfigError
from harness.instrument import ENV_DIR, ENV_PROCESS, FAILED_MARKER, LOADED_MARKER, WRONG_TARGET_MARKER
from harness.stack.process import ProcessService
from harness.stack.readiness import ReadyCheck
from harness.stack.zygote import Zygote


def render_command(template: str, values: Mapping[str, object]) -> list[str]:
    """Split a command template and fill each argument from ``values``."""
    try:
        args = [arg.format_map(values) for arg in shlex.split(template)]
    except KeyError as exc:
        known = ", ".join(sorted(values))
        raise ConfigError(f"command {template!r} uses unknown value {{{exc.args[0]}}}; known: {known}") from exc
    if not args:
        raise ConfigError("empty command")
    return [_resolve(args[0])] + args[1:]


def _resolve(program: str) -> str:
    if program in ("python", "python3"):
        return sys.executable
    beside = Path(sys.executable).parent / program
    return str(beside) if "/" not in program and beside.exists() else program


class AppProcess(ProcessService):
    """One process of the app, started from a command template, ready per its check."""

    scheme = "http"

    def __init__(self, name: str, *, command: str, values: Mapping[str, object],
                 ready: ReadyCheck, start_timeout: float = 30.0, cwd: Path | None = None,
                 zygote: Zygote | None = None, **kwargs):
        super().__init__(name, **kwargs)
        self.zygote = zygote
        if cwd is not None:
            self.cwd = Path(cwd)  # the app runs from its project folder, as its developers run it
        self.template = command
        if ENV_DIR in self.extra_env:
            self.extra_env[ENV_PROCESS] = name  # framework failpoints name the process they fire in
        self.values = dict(values)
        self.ready = ready
        self.start_timeout = start_timeout
        self._spawn_offset = 0

    def command(self) -> list[str]:
        return render_command(self.template, {**self.values, "port": self.port, "name": self.name})

    def spawn(self) -> None:
        self._spawn_offset = self.log_offset()  # readiness reads only this run's output
        super().spawn()

    def launch(self, cmd: list[str], env: dict[str, str], log: BinaryIO) -> Any:
        """Forked from the stack's zygote when it can start ``cmd`` faithfully; else a fresh interpreter."""
        if self.zygote is None or self.run_as():
            return super().launch(cmd, env, log)
        try:
            forked = self.zygote.launch(cmd, env, self.cwd, log.fileno())
        except OSError as exc:
            raise self.error(str(exc)) from exc
        return forked or super().launch(cmd, env, log)

    def probe(self) -> bool:
        log = lambda: self.logs_since(self._spawn_offset)  # noqa: E731
        # a process on another broker or database would wait for it forever: stop waiting, then say why
        if ENV_DIR in self.extra_env and WRONG_TARGET_MARKER in log():
            return True
        return self.ready.probe(self.host, self.port, log)

    def wait_ready(self, timeout: float | None = None, cancel: threading.Event | None = None) -> None:
        super().wait_ready(timeout, cancel)
        if ENV_DIR in self.extra_env:
            self._check_instrumented()

    def _check_instrumented(self) -> None:
        """Fail the start of a process the instrumentation did not load into (it wrote its
        marker at interpreter start, long before the process could be ready)."""
        log = self.logs_since(self._spawn_offset)
        wrong = [line.split(WRONG_TARGET_MARKER, 1)[1].strip() for line in log.splitlines()
                 if WRONG_TARGET_MARKER in line]
        if wrong:
            error = self.error(f"process {self.name!r}: {wrong[0]}")
            self.discard_failed_start()
            raise error
        if LOADED_MARKER in log:
            return
        failed = [line for line in log.splitlines() if FAILED_MARKER in line]
        reason = (failed[0].split(FAILED_MARKER, 1)[1].strip() if failed else
                  "no Python interpreter of this environment started it (a non-Python program, "
                  "a -S / -I interpreter, a PYTHONPATH replaced by the command), or its stderr "
                  "does not reach this log")
        error = self.error(f"jobquake's instrumentation did not load into process {self.name!r}: {reason}; "
                           f"fix it, or set instrument = false for this process")
        self.discard_failed_start()
        raise error
