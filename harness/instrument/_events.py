"""What the instrumentation tells the harness: JSON lines in the run's folder, and log lines.

Events are appended with one ``O_APPEND`` write each, so lines from many
processes never interleave; the harness reads them into the history
(source ``instrument``). Log lines go to the process's stderr, which the
harness keeps as that process's log.
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

EVENTS_FILE = "events.jsonl"
ATTEMPTS_DIR = "attempts"
BROKER_FILE = "broker.json"  # the broker's restore settings as the last worker started applies them


def log(message: str) -> None:
    """One line on stderr, unbuffered (the process may be killed right after)."""
    try:
        os.write(2, f"{message} [pid {os.getpid()}]\n".encode(errors="replace"))
    except OSError:
        pass  # a closed stderr must not break the app


def record(folder: str | None, type: str, name: str, *, job_id: str | None = None,
           attempt: int | None = None, **data: Any) -> None:
    """Append one event to ``folder``'s events file (a no-op without a folder)."""
    if not folder:
        return
    event = {"t": time.monotonic(), "wall": time.time(), "type": type, "name": name,
             "job_id": job_id, "attempt": attempt, "data": {"pid": os.getpid(), **data}}
    line = (json.dumps(event, default=repr) + "\n").encode()
    # the harness makes the file (0600, or 0660 for the app's group) and reads only its own
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
    fd = os.open(os.path.join(folder, EVENTS_FILE), flags, 0o660)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def print_exception(prefix: str) -> None:
    """The current exception, one line per frame, on stderr."""
    import traceback

    log(prefix)
    traceback.print_exc(file=sys.stderr)
    sys.stderr.flush()


def write_state(folder: str | None, name: str, data: dict[str, Any]) -> None:
    """Replace the content of ``folder``'s file ``name`` (made by the harness) with ``data`` as JSON."""
    if not folder:
        return
    fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
    try:
        os.write(fd, json.dumps(data, default=repr).encode())
    finally:
        os.close(fd)
