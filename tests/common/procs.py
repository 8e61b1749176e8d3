"""Real services for refapp's own tests, each a local process in its own group, stopped by PID."""
from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx
import psycopg
import redis

from harness._ports import free_port
from harness._wait import wait_until
from harness.stack.sqs import LAUNCHER as MOTO_LAUNCHER

PG_BIN = Path("/usr/lib/postgresql/15/bin")
HOST = "127.0.0.1"


class Proc:
    """One started process (group); its output goes to ``<logdir>/<name>.log``."""

    def __init__(self, name: str, argv: list[str], *, logdir: Path, env: Mapping[str, str] | None = None,
                 user: str | None = None, stop_signal: int = signal.SIGTERM):
        self.name, self.argv, self.env, self.user = name, argv, dict(env or os.environ), user
        self.stop_signal = stop_signal
        self.log_path = logdir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._offset = 0

    def start(self, ready: Callable[[], object], timeout: float = 30.0) -> Proc:
        self._offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         env=self.env, start_new_session=True, user=self.user)

        def check() -> object:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_text()[-3000:]}")
            return ready()

        try:
            wait_until(check, timeout=timeout, interval=0.05, what=f"{self.name} ready",
                       abort_on=(RuntimeError,))
        except BaseException:
            self.stop()
            raise
        return self

    def log_text(self) -> str:
        """What this run of the process has logged so far."""
        if not self.log_path.exists():
            return ""
        with open(self.log_path, "rb") as fh:
            fh.seek(self._offset)
            return fh.read().decode(errors="replace")

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None:
            return
        for sig in (self.stop_signal, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout)
                break
            except subprocess.TimeoutExpired:
                continue
        with contextlib.suppress(ProcessLookupError):  # children that outlived their leader (a prefork pool)
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = None


def start_redis(logdir: Path) -> tuple[Proc, str]:
    port = free_port()
    proc = Proc("redis", [shutil.which("redis-server") or "redis-server", "--bind", HOST, "--port", str(port),
                          "--save", "", "--appendonly", "no"], logdir=logdir)
    proc.start(lambda: redis.Redis(host=HOST, port=port, socket_timeout=1).ping())
    return proc, f"redis://{HOST}:{port}/0"


def start_postgres(logdir: Path) -> tuple[Proc, str, Path]:
    """PostgreSQL 15 with database ``app``; as user postgres when we are root (it refuses root)."""
    user = "postgres" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="refapp-pg-"))  # under /tmp: the server user can reach it
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if user:
        entry = pwd.getpwnam(user)
        for path in (root, sock):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    subprocess.run([str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync",
                    "-E", "UTF8"], check=True, user=user, capture_output=True)
    port = free_port()
    proc = Proc("postgres", [str(PG_BIN / "postgres"), "-D", str(data), "-h", HOST, "-p", str(port),
                             "-k", str(sock), "-c", "fsync=off", "-c", "max_connections=200"],
                logdir=logdir, user=user, stop_signal=signal.SIGINT)  # "fast" shutdown: no waiting for clients
    dsn = f"postgresql://postgres@{HOST}:{port}/postgres"
    proc.start(lambda: psycopg.connect(dsn, connect_timeout=1).close() or True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE DATABASE app")
    return proc, f"postgresql+psycopg://postgres@{HOST}:{port}/app", root


def start_paidapi(logdir: Path, scale: float) -> tuple[Proc, str]:
    port = free_port()
    proc = Proc("paidapi", [sys.executable, "-m", "harness.paidapi", "--host", HOST, "--port", str(port),
                            "--time-scale", str(scale), "--seed", "7", "--profile", "fixed:5"], logdir=logdir)
    url = f"http://{HOST}:{port}"
    proc.start(lambda: httpx.get(f"{url}/_jobquake/health", timeout=1).is_success)
    return proc, url


def start_moto(logdir: Path) -> tuple[Proc, str]:
    port = free_port()
    proc = Proc("sqs", [sys.executable, str(MOTO_LAUNCHER), "-H", HOST, "-p", str(port)], logdir=logdir)
    url = f"http://{HOST}:{port}"
    proc.start(lambda: httpx.get(f"{url}/moto-api/", timeout=1).status_code == 200)
    return proc, url


def start_app(name: str, argv: list[str], *, logdir: Path, env: Mapping[str, str],
              ready_line: str | None = None, health_url: str | None = None) -> Proc:
    """A refapp process, ready when its log shows ``ready_line`` or ``health_url`` answers."""
    proc = Proc(name, argv, logdir=logdir, env=env)
    if health_url:
        return proc.start(lambda: httpx.get(health_url, timeout=1).is_success)
    return proc.start(lambda: ready_line in proc.log_text())
