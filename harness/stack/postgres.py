"""PostgreSQL as a local process, with a cached template cluster and a fresh database per test.

initdb costs about half a second, so an initialised data directory is kept
in a cache and copied for each session. Postgres refuses to run as root, so
when jobquake runs as root the server runs as the unprivileged ``postgres``
user (or ``nobody``). The app database is dropped and recreated from a
template database between tests: a truly fresh database under the same name,
so long-lived app processes keep their URL (their pools must pre-ping).

Nobody logs in without the session's password: TCP connections need it
(scram-sha-256); the harness itself talks over a Unix socket inside the data
directory, which only the server's user (and root) can enter. The server runs
with its own user's groups, never root's, and its dynamic shared memory lives
in the data directory (``mmap``), so a killed server leaves nothing in
``/dev/shm``.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path
from typing import Callable

import psycopg

from harness._private_dir import private_dir
from harness.stack import reaper
from harness.stack.binaries import find_postgres_bindir
from harness.stack.credentials import scram_verifier, session_password
from harness.stack.process import HOST, ProcessService
from harness.stack.server_user import popen_identity, shared_gid, unprivileged_user  # noqa: F401

SUPERUSER = "postgres"
APP_DB = "app"
TEMPLATE_DB = "app_template"
SPARE_DB = "app_spare"
# 1 MB WAL segments instead of 16: the cluster copied per session shrinks from ~39 MB to ~24 MB.
# Bump the layout name whenever initdb's options change, so old caches are not reused.
TEMPLATE_LAYOUT = "template-wal1"
# Durability is pointless for a database that lives one test: these make writes cheap.
FAST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
FAST_SETTINGS["track_commit_timestamp"] = "on"  # not for speed: the state log reads when each write became visible
# segments in the data dir, not /dev/shm: a SIGKILLed server's would outlive it there
SESSION_SETTINGS = {"dynamic_shared_memory_type": "mmap"}
# statements counted as they run, by the server itself: the evidence of work per item (harness/work.py)
SESSION_SETTINGS["shared_preload_libraries"] = "pg_stat_statements"
# the harness over the socket in the data dir (0700, the server's user); everyone else by password
HBA_RULES = ("# written by jobquake for this session\n"
             "local all postgres trust\n"
             "host all all 127.0.0.1/32 scram-sha-256\n")


def cache_dir() -> Path:
    """Where the template cluster lives; root's home is closed to the unprivileged server user."""
    if "JOBQUAKE_CACHE_DIR" in os.environ:
        return Path(os.environ["JOBQUAKE_CACHE_DIR"])
    if os.geteuid() == 0:
        return Path("/var/tmp/jobquake-cache")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "jobquake"


def private_cache_dir() -> Path:
    """``cache_dir()``, made ours and private (a planted cluster would run as the server user)."""
    cache = cache_dir()
    cache.parent.mkdir(parents=True, exist_ok=True)
    return private_dir(cache, shared_gid(), "set JOBQUAKE_CACHE_DIR to a folder of yours")


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
        self.used_template_cache = False
        self.password = session_password()

    def run_as(self) -> str | None:
        return unprivileged_user()

    def remove_data(self) -> None:
        """Delete this cluster's data directory (after stop)."""
        shutil.rmtree(self.datadir, ignore_errors=True)

    def command(self) -> list[str]:
        cmd = [str(self.bindir / "postgres"), "-D", str(self.datadir), "-h", HOST,
               "-p", str(self.port), "-k", str(self.datadir), "-c", f"max_connections={self.max_connections}"]
        for key, value in {**FAST_SETTINGS, **SESSION_SETTINGS}.items():
            cmd += ["-c", f"{key}={value}"]
        return cmd

    def prepare(self) -> None:
        if self.datadir.exists():
            return
        template = self._template_cluster()
        # cp -a keeps owner and 0700 mode, which postgres insists on
        subprocess.run(["cp", "-a", str(template), str(self.datadir)], check=True)
        with open(self.datadir / "pg_hba.conf", "w") as hba:  # keeps the server user's ownership
            hba.write(HBA_RULES)

    def _template_cluster(self) -> Path:
        """An initdb'd data dir in the cache, made once per Postgres version, under a lock."""
        version = self.bindir.parent.name
        cache = private_cache_dir()  # the unprivileged server user runs initdb inside it (0710)
        template = cache / f"pg-{version}-{TEMPLATE_LAYOUT}"
        with open(cache / f"pg-{version}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if (template / "PG_VERSION").exists():
                self.used_template_cache = True
                return template
            staging = cache / f"pg-{version}-staging-{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(mode=0o700)
            user = self.run_as()
            if user:
                shutil.chown(staging, user)
            out = subprocess.run(
                [str(self.bindir / "initdb"), "-D", str(staging), "-U", SUPERUSER, "--auth=trust",
                 "--no-sync", "-E", "UTF8", "--locale=C", "--wal-segsize=1"],
                capture_output=True, text=True, check=False, **popen_identity(user),
            )
            if out.returncode != 0:
                shutil.rmtree(staging, ignore_errors=True)
                raise self.error(f"initdb failed with code {out.returncode}:\n{out.stdout}{out.stderr}")
            os.rename(staging, template)
            return template

    def url_for(self, dbname: str, driver: str = "postgresql+psycopg", port: int | None = None) -> str:
        """URL of ``dbname`` over TCP with the session's password (``port``: another route to it)."""
        return f"{driver}://{SUPERUSER}:{self.password}@{HOST}:{port or self.port}/{dbname}"

    @property
    def url(self) -> str:
        return self.url_for(APP_DB)

    @property
    def dsn(self) -> str:
        """libpq URL of the app database (for psycopg, psql)."""
        return self.url_for(APP_DB, driver="postgresql")

    def connect(self, dbname: str = "postgres", **kwargs) -> psycopg.Connection:
        """A superuser connection over the server's private socket."""
        return psycopg.connect(host=str(self.datadir), port=self.port, user=SUPERUSER, dbname=dbname,
                               connect_timeout=2, autocommit=True, **kwargs)

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
