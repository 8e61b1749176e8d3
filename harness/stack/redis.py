"""Redis as a local process: the broker and result backend."""
from __future__ import annotations

import redis as redis_client
from redis.backoff import NoBackoff
from redis.retry import Retry

from harness.stack.binaries import find_redis_server
from harness.stack.process import HOST, ProcessService


class RedisService(ProcessService):
    """``redis-server`` on loopback, no persistence (a test's data dies with the test)."""

    scheme = "redis"
    start_timeout = 10.0

    def __init__(self, *args, binary: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.binary = find_redis_server(binary)

    def command(self) -> list[str]:
        return [self.binary, "--bind", HOST, "--port", str(self.port), "--save", "",
                "--appendonly", "no", "--dir", str(self.workdir), "--protected-mode", "yes"]

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def client(self) -> redis_client.Redis:
        # no retries: a probe of a paused server must answer "not ready" within its timeout
        return redis_client.Redis(host=HOST, port=self.port, socket_timeout=1, socket_connect_timeout=1,
                                  retry=Retry(NoBackoff(), 0))

    def probe(self) -> bool:
        with self.client() as conn:
            return bool(conn.ping())

    def reset(self) -> None:
        """Flush every database: each test starts with an empty broker."""
        with self.client() as conn:
            conn.flushall()
