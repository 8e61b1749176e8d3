"""One Postgres cluster of the harness's own, for tests that need a real server and nothing else."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness._ports import free_port, release_port
from harness.stack.postgres import PostgresService


@contextmanager
def postgres_service(workdir: Path) -> Iterator[PostgresService]:
    """A started PostgresService on a free loopback port; stopped, its data removed, at the end."""
    service = PostgresService("postgres", port=free_port(), workdir=workdir)
    service.start()
    try:
        yield service
    finally:
        service.stop()
        service.remove_data()
        release_port(service.port)
