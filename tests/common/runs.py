"""A per-test ``Run`` on a started stack, made the way the plugin makes one for a scenario."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from harness.run import Run
from harness.stack.stack import Stack


@contextmanager
def per_test_run(stack: Stack, artifacts: Path, name: str) -> Iterator[Run]:
    """Reset the stack's world, give the test its own history and artifacts; heal every fault after,
    as the plugin does: no fault outlives its test."""
    stack.reset()
    run = Run(stack, stack.config, artifacts, name)
    try:
        yield run
    finally:
        run.faults.heal_all()
        run.close()
