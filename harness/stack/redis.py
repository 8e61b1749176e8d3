"""Redis as a local process: the broker and result backend.

The server listens on no TCP port: only on a Unix socket in the run's private
folder, which only the harness's user (and root) can reach, so another local
user can neither connect nor take its address while it is down and collect
the password of a client that reconnects. The harness talks to it through
that socket. The app's clients (kombu, Celery's result backend, redis-py)
accept no one URL for a Unix socket, so the app is given a TCP URL whose port
belongs to the fault proxy, which forwards to the socket and keeps the port
bound through an outage (see ``front.py``).

Every client still needs the session's password (``requirepass``). It is
written to a config file in the private run folder, never put on the command
line, where every local user could read it.
"""
from __future__ import annotations

from pathlib import Path

import redis as redis_client
from redis.backoff import NoBackoff
from redis.retry import Retry

from harness.stack import reaper
from harness.stack.binaries import find_redis_server
from harness.stack.credentials import session_password, write_secret
from harness.stack.process import HOST, ProcessService


class RedisService(ProcessService):
    """``redis-server`` on a private Unix socket, no persistence (a test's data dies with the test)."""

    scheme = "redis"
    start_timeout = 10.0

    def __init__(self, *args, binary: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.binary = find_redis_server(binary)
        self.password = session_password()
        self.config_path = self.workdir / "redis.conf"
        self._socket = reaper.socket_dir() / f"redis-{self.port}.sock"

    config_mode = 0o600  # read by the server, which runs as us

    @property
    def socket_path(self) -> Path | None:
        """The server's Unix socket (None: reached over TCP only)."""
        return self._socket

    @property
    def address(self) -> str:
        return str(self.socket_path) if self.socket_path else super().address

    @property
    def proxy_upstream(self) -> str:
        return f"unix:{self.socket_path}" if self.socket_path else super().proxy_upstream

    def config_lines(self) -> list[str]:
        """What the config file holds: the password, and where the server listens."""
        return [f"requirepass {self.password}", "port 0", f"unixsocket {self.socket_path}", "unixsocketperm 700"]

    def write_config(self) -> None:
        """The config file holding the password (the first argument of the command)."""
        write_secret(self.config_path, "".join(line + "\n" for line in self.config_lines()), self.config_mode)

    def prepare(self) -> None:
        self.write_config()

    def command(self) -> list[str]:
        return [self.binary, str(self.config_path), "--save", "", "--appendonly", "no",
                "--dir", str(self.workdir), "--protected-mode", "yes"]

    def url_for(self, port: int | None = None, db: int = 0) -> str:
        """URL with the session's password: over TCP to ``port`` (a route to the server), or
        (redis-py's form) through the private socket."""
        if port is None and self.socket_path is not None:
            return f"unix://:{self.password}@{self.socket_path}?db={db}"
        return f"redis://:{self.password}@{HOST}:{port or self.port}/{db}"

    @property
    def url(self) -> str:
        return self.url_for()

    def client(self) -> redis_client.Redis:
        # no retries: a probe of a paused server must answer "not ready" within its timeout
        where = ({"unix_socket_path": str(self.socket_path)} if self.socket_path
                 else {"host": HOST, "port": self.port})
        return redis_client.Redis(**where, password=self.password, socket_timeout=1, socket_connect_timeout=1,
                                  retry=Retry(NoBackoff(), 0))

    def probe(self) -> bool:
        with self.client() as conn:
            return bool(conn.ping())

    def reset(self) -> None:
        """Flush every database: each test starts with an empty broker."""
        with self.client() as conn:
            conn.flushall()
