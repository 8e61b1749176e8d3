"""Postgres and Redis answer only to the session: another user can neither log in nor run programs."""
from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Iterator

import psycopg
import pytest
import redis

from harness._ports import free_port, release_port
from harness.stack.postgres import PostgresService
from harness.stack.redis import RedisService
from tests.security.conftest import SYSTEM_PYTHON

pytestmark = pytest.mark.integration

PSQL = "/usr/bin/psql"


@pytest.fixture(scope="module")
def postgres(tmp_path_factory) -> Iterator[PostgresService]:
    port = free_port()
    with PostgresService("postgres", port=port, workdir=tmp_path_factory.mktemp("pg")) as svc:
        yield svc
    svc.remove_data()
    release_port(port)


def status_ids(pid: int) -> dict[str, list[int]]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: [int(v) for v in rest.split()] for k, _, rest in (line.partition(":") for line in lines)
            if k in ("Uid", "Gid", "Groups")}


def test_another_user_cannot_log_in_to_postgres_to_run_copy_to_program(attacker, postgres):
    marker = Path("/tmp") / f"jq-owned-{secrets.token_hex(4)}"
    statement = f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'"
    # over TCP nothing listens; the server's socket is in a folder only we (and its user) can enter
    for host, refusal in (("127.0.0.1", "Connection refused"), (str(postgres.datadir), "Permission denied")):
        tried = attacker.run([PSQL, "-w", "-h", host, "-p", str(postgres.port), "-U", "postgres",
                              "-d", "postgres", "-c", statement], env={"PGCONNECT_TIMEOUT": "5"})
        assert tried.returncode != 0 and refusal in tried.stderr, tried.stderr
    assert not marker.exists(), "another user ran a program as the postgres user"


def test_only_the_sessions_password_logs_in_even_through_the_private_socket(postgres):
    url = postgres.url_for("postgres", driver="postgresql")
    assert "host=" + str(postgres.datadir) in url  # the socket, not a port anyone could take
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(url.replace(postgres.password, "x" * 32), connect_timeout=5)
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:  # the control: it does log in
        assert conn.execute("SELECT current_user").fetchone() == ("postgres",)
        assert conn.execute("SHOW listen_addresses").fetchone() == ("",)
        assert conn.execute("SHOW authentication_timeout").fetchone() == ("5s",)
    other = PostgresService("postgres", port=postgres.port, workdir=postgres.workdir)
    assert other.password != postgres.password, "the password must be new for every session"


def test_postgres_runs_without_roots_groups_and_keeps_its_shared_memory_out_of_dev_shm(postgres):
    if os.geteuid() != 0:
        pytest.skip("as an ordinary user the server runs as that user, with that user's groups")
    ids = status_ids(postgres.pid)
    assert 0 not in ids["Uid"] and 0 not in ids["Gid"] and 0 not in ids["Groups"], ids
    maps = Path(f"/proc/{postgres.pid}/maps").read_text()
    assert "/dev/shm/PostgreSQL" not in maps, "a SIGKILLed server would leave this segment behind"
    assert f"{postgres.datadir}/pg_dynshmem/" in maps


REACH_SOCKET = """
import socket, sys
try:
    socket.socket(socket.AF_UNIX).connect(sys.argv[1])
    print("connected")
except OSError as exc:
    print(type(exc).__name__)
"""


def test_redis_needs_the_sessions_password_which_is_on_no_command_line(attacker, tmp_path):
    port = free_port()
    with RedisService("redis", port=port, workdir=tmp_path) as svc:
        with redis.Redis(unix_socket_path=str(svc.socket_path), socket_timeout=2) as anonymous:
            with pytest.raises(redis.AuthenticationError):
                anonymous.ping()
        assert svc.client().ping()
        assert svc.password not in Path(f"/proc/{svc.pid}/cmdline").read_text()
        assert oct(svc.config_path.stat().st_mode & 0o777) == "0o600"
        with pytest.raises(redis.ConnectionError):  # no TCP listener: nothing to take while it is down
            redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, retry=None).ping()
        tried = attacker.run([SYSTEM_PYTHON, "-I", "-c", REACH_SOCKET, str(svc.socket_path)])
        assert tried.stdout.strip() == "PermissionError", tried
    release_port(port)
