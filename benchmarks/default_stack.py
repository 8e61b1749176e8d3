"""The default stack of the project in the current directory, started as a scenario session starts it."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.config import find_pyproject, resolve
from harness.stack import reaper
from harness.stack.stack import Stack


@contextmanager
def default_stack() -> Iterator[Stack]:
    """Up on entry; stopped, and its run directory removed, on exit."""
    reaper.reap()
    stack = Stack(resolve(pyproject=find_pyproject(Path.cwd())), reaper.run_dir() / "stack")
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()
        reaper.remove_run_dir()
