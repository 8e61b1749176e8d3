"""App processes forked from a zygote that has already imported the app's libraries.

A fresh interpreter per app process pays for importing Celery, SQLAlchemy,
httpx and boto3 at every start; a session starts dozens (workers killed and
restarted, stacks isolated). ``Zygote`` runs ``zygote_main.py`` once per
stack, which imports the configured modules (``app_preload``) and forks each
app process on request. The fork becomes ``python -m MODULE`` or a console
script as a fresh interpreter would (its own session, environment, folder,
log, ``sys.path`` and ``sitecustomize``), so the app and its instrumentation
cannot tell, and a process the zygote cannot start faithfully (another
interpreter, interpreter options, another user, a ``PYTHON*`` variable the
zygote's interpreter was started without) is started the usual way.

``ForkedProcess`` is the harness's handle on such a process: what
``ProcessService`` uses of ``subprocess.Popen`` (``pid``, ``poll``,
``wait``), with the exit status sent by the zygote, which is its parent.
"""
from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Mapping, Sequence

from harness.stack import reaper

MAIN = Path(__file__).resolve().parent / "zygote_main.py"
# PYTHON* variables read at interpreter start that the fork applies itself; any other one set
# differently from the zygote's own start means the process is started the usual way
HONOURED = frozenset({"PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"})
READY_TIMEOUT = 60.0  # the preload imports a few seconds' worth on a loaded machine
REPLY_TIMEOUT = 30.0  # a fork and one line back, on a machine under any load
# What the zygote imports before it forks app processes: the libraries a Celery + SQLAlchemy app
# imports at start, with Celery's worker and command line (those not installed are skipped). A model
# client is left out: the openai client costs 0.9 CPU-s to import, anthropic's 1.6, in every
# session, used or not (config ``app_preload`` adds the app's own). SQLAlchemy's PostgreSQL dialects
# and httpx's transport (httpcore) load at first use: preloaded, each app process skips ~0.13 CPU-s.
DEFAULT_APP_PRELOAD = (
    "celery", "celery.bin.celery", "celery.apps.worker", "celery.worker.consumer", "celery.concurrency.prefork",
    "celery.concurrency.asynpool", "celery.app.trace", "celery.events.dispatcher", "celery.events.receiver",
    "celery.backends.redis", "celery.utils.debug", "kombu", "kombu.transport.redis", "kombu.transport.virtual",
    "kombu.pidbox", "billiard.pool", "billiard.popen_fork", "billiard.synchronize", "redis", "sqlalchemy",
    "sqlalchemy.orm", "sqlalchemy.dialects.postgresql", "psycopg", "psycopg2", "httpx", "httpcore", "requests",
    "boto3", "botocore.session", "cffi", "pycparser.c_parser", "tenacity",
)
TITLE_ROOM = 4096  # bytes of command line a forked process can show (a longer one is cut)


def request_for(cmd: Sequence[str], env: Mapping[str, str], cwd: Path,
                zygote_env: Mapping[str, str] | None = None) -> dict | None:
    """The zygote's request that starts ``cmd``, or None when a fork could not start it faithfully
    (``zygote_env``: the environment the zygote started with; default ours)."""
    zygote_env = os.environ if zygote_env is None else zygote_env
    if not cmd or any(k.startswith("PYTHON") and k not in HONOURED and env.get(k) != zygote_env.get(k)
                      for k in {*env, *zygote_env}):
        return None
    program, args = cmd[0], list(cmd[1:])
    base = {"env": dict(env), "cwd": str(cwd), "argv": list(cmd)}
    if program == sys.executable:
        if len(args) >= 2 and args[0] == "-m":
            return {**base, "module": args[1], "args": args[2:]}
        if args and not args[0].startswith("-"):
            return {**base, "script": str(Path(cwd, args[0])), "args": args[1:]}
        return None
    if _is_script_of_this_interpreter(program):
        return {**base, "script": program, "args": args}
    return None


def _is_script_of_this_interpreter(path: str) -> bool:
    """A console script (``celery``, ``uvicorn``) whose ``#!`` line names the interpreter running us."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(4096)
    except OSError:
        return False
    return first.rstrip(b"\r\n") == b"#!" + os.fsencode(sys.executable)


class Zygote:
    """One zygote process: started in the background at once (again on first use after ``close``)."""

    def __init__(self, modules: Sequence[str], workdir: Path):
        self.modules = list(modules)
        Path(workdir).mkdir(parents=True, exist_ok=True)
        self.log_path = Path(workdir) / "zygote.log"
        self._lock = threading.Lock()  # one request at a time on the control socket; one start at a time
        self._control: socket.socket | None = None
        self._proc: subprocess.Popen | None = None
        self._ready = threading.Event()
        self._failed: str | None = None
        self._env: dict[str, str] = {}
        self._begin()

    def _begin(self) -> None:
        self._ready.clear()
        self._failed = None
        self._env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # PYTHONPATH is per process
        threading.Thread(target=self._start, args=(self._env,), name="zygote-start", daemon=True).start()

    def _start(self, env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        room = "--room=" + "." * TITLE_ROOM
        try:
            with open(self.log_path, "ab") as log:
                self._proc = subprocess.Popen(
                    [sys.executable, str(MAIN), str(theirs.fileno()), *self.modules, room],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                    pass_fds=(theirs.fileno(),), start_new_session=True)
            reaper.record(self._proc.pid)
            theirs.close()
            ours.settimeout(READY_TIMEOUT)
            if ours.recv(64) != b"ready\n":
                raise OSError("it ended before it was ready")
            ours.settimeout(None)
            self._control = ours
        except OSError as exc:
            self._failed = f"{exc}; see {self.log_path}"
            print(f"jobquake: the zygote did not start ({self._failed}): app processes start as fresh "
                  f"interpreters", file=sys.stderr)
            theirs.close()
            ours.close()
        finally:
            self._ready.set()

    def launch(self, cmd: Sequence[str], env: Mapping[str, str], cwd: Path, log_fd: int) -> "ForkedProcess | None":
        """Fork ``cmd`` with its output to ``log_fd``; None when the zygote cannot start it (start it yourself)."""
        request = request_for(cmd, env, cwd, self._env)
        if request is None:
            return None
        with self._lock:
            if self._ready.is_set() and self._control is None and self._failed is None:
                self._begin()  # closed by an earlier stop of the stack: this start needs it again
        if not self._ready.wait(READY_TIMEOUT) or self._control is None:
            return None
        ours, theirs = socket.socketpair()
        try:
            with self._lock:
                if self._control is None:
                    return None
                socket.send_fds(self._control, [json.dumps(request).encode()], [log_fd, theirs.fileno()])
        except OSError:
            ours.close()
            return None  # the zygote is gone (killed): the usual way still works
        finally:
            theirs.close()
        return ForkedProcess(list(cmd), ours)

    def close(self) -> None:
        """End the zygote (the processes it forked are their services' to stop)."""
        self._ready.wait(READY_TIMEOUT)
        with self._lock:
            if self._control is not None:
                self._control.close()  # its end of the socket reads EOF: it returns and exits
                self._control = None
            proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            reaper.forget(proc.pid)


class ForkedProcess:
    """A process forked by the zygote: ``pid``, ``poll()`` and ``wait()`` as ``subprocess.Popen`` has them."""

    def __init__(self, args: list[str], channel: socket.socket):
        self.args = args
        self.returncode: int | None = None
        self._channel: socket.socket | None = channel
        self._buffer = b""
        self._lock = threading.RLock()
        self._orphaned = False  # the zygote ended first: the process is ours to reap (we are its subreaper)
        self.pid: int | None = None
        deadline = time.monotonic() + REPLY_TIMEOUT
        while self.pid is None and self._channel is not None and time.monotonic() < deadline:
            self._read(deadline - time.monotonic())
        if self.pid is None:
            raise OSError(f"the zygote did not report the pid of {' '.join(args)!r} within {REPLY_TIMEOUT:.0f}s")

    def poll(self) -> int | None:
        # as Popen.poll: while another thread waits, it will read the exit; do not block behind it
        if not self._lock.acquire(blocking=False):
            return self.returncode
        try:
            if self.returncode is None:
                self._read(0)
            return self.returncode
        finally:
            self._lock.release()

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                self._read(0.01 if self._orphaned else left)
                if self.returncode is not None:
                    return self.returncode
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout)
            if self._orphaned:
                time.sleep(0.01)  # nothing to wait on but the process table

    def _read(self, timeout: float | None) -> None:
        if self._orphaned:
            self._reap_orphan()
            return
        channel = self._channel
        if channel is None or not select.select([channel], [], [], timeout)[0]:
            return
        data = channel.recv(256)
        if not data:
            channel.close()
            self._channel = None
            self._orphaned = self.pid is not None
            if self._orphaned:
                self._reap_orphan()
            return
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            word, _, value = line.decode().partition(" ")
            if word == "pid":
                self.pid = int(value)
            elif word == "exit":
                self.returncode = int(value)
                channel.close()
                self._channel = None

    def _reap_orphan(self) -> None:
        """The zygote died before its child: the child was re-parented to us, or (no subreaper) to init."""
        assert self.pid is not None
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            if not Path(f"/proc/{self.pid}").exists():
                self.returncode = -9  # its exit status went to another parent: report it as killed
            return
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)
