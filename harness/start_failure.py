"""A stack that did not start, told once per session in one paragraph.

pytest re-raises a failed session fixture for every test that uses it, each
time with its whole traceback: a wrong ``redis_binary`` printed 45 lines per
test, an app process that never became ready 209 lines of chained
tracebacks with the one clear sentence last. The session turns the failure
into ``StackDidNotStart``: one paragraph (what failed, where, what to do,
where its log is kept), shown by the first test that needed the stack; every
later one says in a line that it did not run for that reason. The run folder
is removed after a failed start, so the logs of the services that were
starting are kept in the session's artifacts folder first.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.errors import HarnessError, MissingBinaryError, ServiceError

LOG_FOLDER = "start-failure"
LAST_LINES = 3  # of a failed service's log, quoted in the paragraph


class StackDidNotStart(HarnessError):
    """The session's stack failed to start; ``paragraph`` says why, once."""

    def __init__(self, paragraph: str, cause: BaseException):
        super().__init__(paragraph)
        self.paragraph = paragraph
        self.cause = cause
        self.told_by: str | None = None  # the test whose report showed the paragraph


def keep_logs(stack: Any, folder: Path) -> dict[str, Path]:
    """Copy the logs of the stack's services into ``folder`` (the run folder is about to go)."""
    kept: dict[str, Path] = {}
    for service in stack.services() if stack is not None else ():
        source = getattr(service, "log_path", None)
        if source is not None and source.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            kept[service.name] = Path(shutil.copy(source, folder / source.name))
    return kept


def _what_to_do(error: HarnessError, log: Path | None) -> str:
    if isinstance(error, MissingBinaryError):
        return ""  # its message says what to install
    if isinstance(error, ServiceError):
        where = f"its log: {log}" if log is not None else "its log"
        if "did not become ready" in str(error):
            return f" Look at why in {where}, or give it longer (start_timeout)."
        return f" Look at why in {where}."
    return ""


def describe(error: BaseException, logs: dict[str, Path]) -> str:
    """One paragraph for a start that failed with ``error`` (several, for a group)."""
    if isinstance(error, BaseExceptionGroup):
        return " ".join(describe(e, logs) for e in error.exceptions)
    if not isinstance(error, HarnessError):
        return f"{type(error).__name__}: {error}"
    service = getattr(error, "service", None)
    log = logs.get(service) if service else None
    first, *rest = str(error).splitlines()
    sentence = first + (f" ({'; '.join(rest)})" if rest else "")
    tail = [line.strip() for line in (getattr(error, "log_tail", None) or "").splitlines() if line.strip()]
    quoted = f" Its log ends: {' | '.join(tail[-LAST_LINES:])}." if tail else ""
    return f"{sentence}.{quoted}{_what_to_do(error, log)}"


def did_not_start(error: BaseException, stack: Any, artifacts: Path) -> StackDidNotStart:
    """The session's error for a failed start: the logs kept under ``artifacts``, one paragraph."""
    try:
        logs = keep_logs(stack, artifacts / LOG_FOLDER)
    except OSError:
        logs = {}
    paragraph = "jobquake: the stack did not start, so no scenario of this session ran. " + describe(error, logs)
    return StackDidNotStart(paragraph, error)


class StartFailureReport:
    """The plugin part that shows a ``StackDidNotStart`` once: the paragraph, then one line per test."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        error = call.excinfo.value if call.excinfo is not None else None
        if isinstance(error, StackDidNotStart) and report.failed:
            if error.told_by is None:
                error.told_by = item.nodeid
                report.longrepr = error.paragraph
            else:
                report.longrepr = f"jobquake: the stack did not start (see {error.told_by})"
        return report
