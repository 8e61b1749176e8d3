"""The default stack of the project in the current directory, started as a scenario session starts it."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.config import find_pyproject, resolve
from harness.stack import reaper
from harness.stack.stack import Stack


@contextmanager
def default_stack(name: str = "stack", **cli: Any) -> Iterator[Stack]:
    """Up on entry; stopped, and its run directory removed, on exit (``cli``: settings as on the
    command line, e.g. ``app_zygote=False``; ``name``: its folder, so that two can run at once)."""
    reaper.reap()
    stack = Stack(resolve(cli=cli, pyproject=find_pyproject(Path.cwd())), reaper.run_dir() / name)
    _open.append(stack)
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
        _open.remove(stack)
        if not _open:  # the run folder is every open stack's: removing it ends what they recorded
            reaper.remove_run_dir()


_open: list[Stack] = []
