"""Redis as a local process: the broker and result backend.

Every client needs the session's password (``requirepass``). It is written to
a config file in the private run folder, never put on the command line, where
every local user could read it.
"""
from __future__ import annotations

import os

import redis as redis_client
from redis.backoff import NoBackoff
from redis.retry import Retry

from harness.stack.binaries import find_redis_server
from harness.stack.credentials import session_password
from harness.stack.process import HOST, ProcessService


class RedisService(ProcessService):
    """``redis-server`` on loopback, no persistence (a test's data dies with the test)."""

    scheme = "redis"
    start_timeout = 10.0

    def __init__(self, *args, binary: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.binary = find_redis_server(binary)
        self.password = session_password()
        self.config_path = self.workdir / "redis.conf"

    config_mode = 0o600  # read by the server, which runs as us

    def write_config(self) -> None:
        """The config file holding the password (the first argument of the command)."""
        fd = os.open(self.config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as conf:
            os.fchmod(fd, self.config_mode)
            conf.write(f"requirepass {self.password}\n")

    def prepare(self) -> None:
        self.write_config()

    def command(self) -> list[str]:
        return [self.binary, str(self.config_path), "--bind", HOST, "--port", str(self.port), "--save", "",
                "--appendonly", "no", "--dir", str(self.workdir), "--protected-mode", "yes"]

    def url_for(self, port: int | None = None, db: int = 0) -> str:
        """URL with the session's password (``port``: another route to the server)."""
        return f"redis://:{self.password}@{HOST}:{port or self.port}/{db}"

    @property
    def url(self) -> str:
        return self.url_for()

    def client(self) -> redis_client.Redis:
        # no retries: a probe of a paused server must answer "not ready" within its timeout
        return redis_client.Redis(host=HOST, port=self.port, password=self.password, socket_timeout=1,
                                  socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))

    def probe(self) -> bool:
        with self.client() as conn:
            return bool(conn.ping())

    def reset(self) -> None:
        """Flush every database: each test starts with an empty broker."""
        with self.client() as conn:
            conn.flushall()
