"""Fixtures shared by the shipped scenarios: a client of the reference app."""
from __future__ import annotations

from typing import Iterator

import pytest

from harness import Run
from scenarios.refapp_client import RefApp


@pytest.fixture
def refapp(jq: Run) -> Iterator[RefApp]:
    """refapp's API, status events and tables, recording into this scenario's history."""
    client = RefApp(jq)
    yield client
    client.close()
