"""PostgreSQL as a local process, with a cached template cluster and a fresh database per test.

initdb costs about half a second, so an initialised data directory is kept
in a cache and copied for each session (``template_cache.py``). Postgres
refuses to run as root, so when jobquake runs as root the server runs as the
unprivileged ``postgres`` user (or ``nobody``). The app database is dropped
and recreated from a template database between tests: a truly fresh database
under the same name, so long-lived app processes keep their URL (their pools
must pre-ping).

The server listens on no TCP port: only on a Unix socket inside its data
directory, in the run's private folder, which only the server's user, the
harness's user and root can reach. Another local user therefore cannot
connect, fill its connection slots, or take its address while it restarts
and collect the password of a client that reconnects. Every connection
still needs the session's password (scram-sha-256), so what the fault proxy
forwards to the socket when the app reaches the database through it gets in
only with that password too. The cached template has a bootstrap password of
its own, known only to jobquake's user, which the first connection of a
session replaces; the socket is never open without a password. A connection
that does not finish authenticating is cut after ``AUTHENTICATION_TIMEOUT``.
The server runs with its own user's groups, never root's, and its dynamic
shared memory lives in the data directory (``mmap``), so a killed server
leaves nothing in ``/dev/shm``.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path
from typing import Callable
from urllib.parse import quote

import psycopg

from harness.stack import reaper
from harness.stack.binaries import find_postgres_bindir
from harness.stack.credentials import scram_verifier, session_password
from harness.stack.process import HOST, ProcessService
from harness.stack.server_user import popen_identity, shared_gid, unprivileged_user  # noqa: F401
from harness.stack.template_cache import cache_dir, private_cache_dir, template_cluster  # noqa: F401
from harness.stack.template_cache import copy_for_session

SUPERUSER = "postgres"
APP_DB = "app"
TEMPLATE_DB = "app_template"
SPARE_DB = "app_spare"
# Durability is pointless for a database that lives one test: these make writes cheap.
FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
FAST_SETTINGS["track_commit_timestamp"] = "on"  # not for speed: the state log reads when each write became visible
AUTHENTICATION_TIMEOUT = "5s"  # a connection that never finishes logging in holds a slot this long at most
# slots only those who reach the socket directly can take: the fault proxy's route to it stops short of them,
# so however many connections arrive through it (stalled logins included), the harness can read the verdict
RESERVED_CONNECTIONS = 3
# segments in the data dir, not /dev/shm: a SIGKILLed server's would outlive it there
SESSION_SETTINGS = {"dynamic_shared_memory_type": "mmap", "authentication_timeout": AUTHENTICATION_TIMEOUT,
                    "superuser_reserved_connections": str(RESERVED_CONNECTIONS)}
# statements counted as they run, by the server itself: the evidence of work per item (harness/work.py)
SESSION_SETTINGS["shared_preload_libraries"] = "pg_stat_statements"
# every connection by password: the socket is private, but the fault proxy may forward others to it
HBA_RULES = ("# written by jobquake for this session\n"
             "local all all scram-sha-256\n")
# libpq: never give the password to a server that asks for it in clear, as an impostor on a free port would
REQUIRE_AUTH = "require_auth=scram-sha-256"


class PostgresService(ProcessService):
    """One Postgres cluster per session; ``app`` is recreated from ``app_template`` per test."""

    scheme = "postgresql"
    start_timeout = 30.0
    stop_signal = signal.SIGINT  # "fast" shutdown; SIGTERM waits for every client to leave

    def __init__(self, *args, bindir: str | None = None, max_connections: int = 60,
                 schema: Callable[[str], None] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.bindir = find_postgres_bindir(bindir)
        self.max_connections = max_connections
        self.schema = schema
        # not under workdir: that may be a private folder (pytest's tmp_path is 0700) the
        # unprivileged server user cannot enter; the run folder is ours and world-traversable,
        # and in memory when it can be (see reaper.memory_dir: the cluster lives one session)
        self.datadir = reaper.memory_dir() / f"pgdata-{self.port}"
        # the socket beside the data, unless that path is too long for a socket (a deep TMPDIR)
        lock_file = f"{self.datadir}/.s.PGSQL.{self.port}.lock"
        self._sockets = (self.datadir if len(os.fsencode(lock_file)) <= reaper.SOCKET_PATH_MAX
                         else reaper.socket_dir() / f"pg-{self.port}")
        self.used_template_cache = False
        self.password = session_password()
        self._login = self.password  # the password the superuser has now (the template's, until set)

    def run_as(self) -> str | None:
        return unprivileged_user()

    @property
    def front_limit(self) -> int:
        """The connections a route to it may hold at once: all but the reserved ones."""
        return self.max_connections - RESERVED_CONNECTIONS

    def remove_data(self) -> None:
        """Delete this cluster's data directory (after stop)."""
        shutil.rmtree(self.datadir, ignore_errors=True)
        if self.socket_dir is not None and self.socket_dir != self.datadir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)

    @property
    def socket_dir(self) -> Path | None:
        """The folder of the server's Unix socket (None: reached over TCP only)."""
        return self._sockets

    @property
    def address(self) -> str:
        return f"{self.socket_dir}/.s.PGSQL.{self.port}" if self.socket_dir else super().address

    @property
    def proxy_upstream(self) -> str:
        return f"unix:{self.address}" if self.socket_dir else super().proxy_upstream

    def command(self) -> list[str]:
        # -h '': no TCP listener; the port only names the socket file
        cmd = [str(self.bindir / "postgres"), "-D", str(self.datadir), "-h", "", "-p", str(self.port),
               "-k", str(self.socket_dir), "-c", f"max_connections={self.max_connections}"]
        for key, value in {**FAST_SETTINGS, **SESSION_SETTINGS}.items():
            cmd += ["-c", f"{key}={value}"]
        return cmd

    def prepare(self) -> None:
        if self.datadir.exists():
            return
        template, self._login, self.used_template_cache = template_cluster(self.bindir.parent.name, self._initdb)
        try:
            copy_for_session(template, self.datadir, self.run_as())
        except subprocess.CalledProcessError as exc:
            raise self.error(f"cannot copy the template cluster {template}: {exc.stderr.decode().strip()}") from exc
        with open(self.datadir / "pg_hba.conf", "w") as hba:  # keeps the server user's ownership
            hba.write(HBA_RULES)
        if self.socket_dir != self.datadir:
            os.mkdir(self.socket_dir, 0o700)
            if self.run_as():
                shutil.chown(self.socket_dir, self.run_as())

    def _initdb(self, staging: Path) -> str:
        """Make a cluster in ``staging`` whose superuser has a bootstrap password (kept beside it, ours only)."""
        user = self.run_as()
        if user:
            shutil.chown(staging, user)
        identity = popen_identity(user)
        out = subprocess.run([str(self.bindir / "initdb"), "-D", str(staging), "-U", SUPERUSER, "--auth=trust",
                              "--no-sync", "-E", "UTF8", "--locale=C", "--wal-segsize=1"],
                             capture_output=True, text=True, check=False, **identity)
        if out.returncode != 0:
            raise self.error(f"initdb failed with code {out.returncode}:\n{out.stdout}{out.stderr}")
        bootstrap = session_password()
        # single-user mode: no socket and no port, so the cluster is never open without a password
        out = subprocess.run([str(self.bindir / "postgres"), "--single", "-D", str(staging), "-j", "postgres"],
                             input=f"ALTER ROLE {SUPERUSER} PASSWORD '{scram_verifier(bootstrap)}';\n",
                             capture_output=True, text=True, check=False, **identity)
        if out.returncode != 0:
            raise self.error(f"cannot set the template's bootstrap password:\n{out.stdout}{out.stderr}")
        return bootstrap

    def url_for(self, dbname: str, driver: str = "postgresql+psycopg", port: int | None = None) -> str:
        """URL of ``dbname`` with the session's password: through the private socket, or (``port``:
        another route to it, such as the fault proxy) over TCP."""
        if port is None and self.socket_dir is not None:
            return (f"{driver}://{SUPERUSER}:{self.password}@/{dbname}"
                    f"?host={quote(str(self.socket_dir), safe='/')}&port={self.port}")
        if port is None:  # the server's own TCP port, which another user could take while it is down
            return f"{driver}://{SUPERUSER}:{self.password}@{HOST}:{self.port}/{dbname}?{REQUIRE_AUTH}"
        return f"{driver}://{SUPERUSER}:{self.password}@{HOST}:{port}/{dbname}"

    @property
    def url(self) -> str:
        return self.url_for(APP_DB)

    @property
    def dsn(self) -> str:
        """libpq URL of the app database (for psycopg, psql)."""
        return self.url_for(APP_DB, driver="postgresql")

    def connect(self, dbname: str = "postgres", **kwargs) -> psycopg.Connection:
        """A superuser connection over the server's private socket."""
        return psycopg.connect(host=str(self.socket_dir), port=self.port, user=SUPERUSER, dbname=dbname,
                               password=self._login, connect_timeout=2, autocommit=True, **kwargs)

    def probe(self) -> bool:
        with self.connect() as conn:
            return conn.execute("SELECT 1").fetchone() == (1,)

    def after_ready(self) -> None:
        """Build the template database once (schema from the app), then the first app database."""
        with self.connect() as conn:
            self.set_password(conn)
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (TEMPLATE_DB,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{TEMPLATE_DB}"')
        if not exists and self.schema is not None:
            self.schema(self.url_for(TEMPLATE_DB))
        self.reset()

    def set_password(self, conn: psycopg.Connection) -> None:
        """Give the superuser the session's password (as a SCRAM verifier: the password itself
        never reaches the server)."""
        conn.execute(f"ALTER ROLE {SUPERUSER} PASSWORD '{scram_verifier(self.password)}'")
        self._login = self.password

    def reset(self) -> None:
        """Replace the app database with a fresh copy of the template (drops open connections).

        Copying the template takes ~100 ms, so the next copy (``app_spare``) is
        made in the background while a test runs; a reset then only drops the
        old database and renames the spare.
        """
        self._await_spare()
        with self.connect() as conn:
            has_spare = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (SPARE_DB,)).fetchone()
            conn.execute(f'DROP DATABASE IF EXISTS "{APP_DB}" WITH (FORCE)')
            if has_spare:
                conn.execute(f'ALTER DATABASE "{SPARE_DB}" RENAME TO "{APP_DB}"')
            else:
                self._copy_template(conn, APP_DB)
        self._spare = threading.Thread(target=self._make_spare, name="postgres-spare-db", daemon=True)
        self._spare.start()

    def _copy_template(self, conn: psycopg.Connection, name: str) -> None:
        # a template cannot be copied while someone is connected to it
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = %s AND pid <> pg_backend_pid()", (TEMPLATE_DB,))
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')

    def _make_spare(self) -> None:
        try:
            with self.connect() as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{SPARE_DB}"')
                self._copy_template(conn, SPARE_DB)
        except psycopg.Error:
            pass  # the server went away (a fault, or stop): the next reset copies directly

    def _await_spare(self, timeout: float | None = None) -> None:
        spare = getattr(self, "_spare", None)
        if spare is not None:
            spare.join(timeout)
            self._spare = None

    def stop(self, timeout: float | None = None) -> None:
        self.resume()  # a paused server would hold the spare copy forever
        self._await_spare(timeout=10.0)
        super().stop(timeout)
