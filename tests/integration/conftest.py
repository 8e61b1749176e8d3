"""The tiny app's whole stack for the integration tests, and a per-test Run on it."""
from __future__ import annotations

import pytest

from tests.common.runs import per_test_run


@pytest.fixture(scope="session")
def tiny_stack():
    """The whole stack (Redis, Postgres, SQS, paid API, proxy, one worker) running the tiny app."""
    from tests.common.tiny import tiny_stack as make

    stack = make()
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture
def tiny(tiny_stack, tmp_path):
    """A per-test Run on the tiny stack: reset world, own history and artifacts."""
    with per_test_run(tiny_stack, tmp_path / "artifacts", "tiny") as run:
        yield run
