"""Celery workers: subprocesses in their own process groups, killed and replaced at will.

Only the prefork pool enforces soft and hard time limits, so a worker
command that asks for another pool is refused: scenarios about deadlines
would pass for the wrong reason.
"""
from __future__ import annotations

import shlex
import signal
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from harness._proc import process_tree
from harness.errors import ConfigError
from harness.stack.app import AppProcess
from harness.stack.process import start_all
from harness.stack.readiness import ReadyCheck

__all__ = ["CeleryWorker", "DEFAULT_READY", "OTHER_POOLS", "WorkerEvent", "WorkerPool", "check_prefork", "worker_name"]

# Celery logs "celery@host ready." once the worker consumes; that is readiness.
DEFAULT_READY = ReadyCheck("log", r"\bready\.")
OTHER_POOLS = ("solo", "threads", "eventlet", "gevent", "custom")

WorkerEvent = Callable[[str, "CeleryWorker", dict[str, Any]], None]


def check_prefork(command: str) -> None:
    args = shlex.split(command)
    for i, arg in enumerate(args):
        value = None
        if arg in ("-P", "--pool") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--pool="):
            value = arg.split("=", 1)[1]
        if value in OTHER_POOLS:
            raise ConfigError(
                f"worker command uses --pool {value}: only the prefork pool enforces soft/hard "
                f"time limits, so deadline scenarios would be meaningless; use --pool prefork",
                key="worker_command")


class CeleryWorker(AppProcess):
    """One Celery worker (a main process and its prefork children, one process group)."""

    stop_timeout = 10.0  # SIGTERM is Celery's warm shutdown: running tasks may finish


def worker_name(index: int) -> str:
    """The name of the pool's worker at ``index`` (``worker1`` for 0): how faults and ``jq.stack`` name it."""
    return f"worker{index + 1}"


class WorkerPool:
    """A set of workers started from one command; the unit faults act on."""

    def __init__(self, *, factory: Callable[..., CeleryWorker] = CeleryWorker, command: str, values: Mapping[str, object], count: int, workdir: Path,
                 env: Mapping[str, str], ready: ReadyCheck = DEFAULT_READY,
                 start_timeout: float = 30.0, on_event: WorkerEvent | None = None,
                 cwd: Path | None = None):
        check_prefork(command)
        if count < 0:
            raise ConfigError(f"worker count must be >= 0, got {count}", key="workers")
        self.factory = factory
        self.command = command
        self.values = dict(values)
        self.workdir = Path(workdir)
        self.env = dict(env)
        self.ready = ready
        self.start_timeout = start_timeout
        self.on_event = on_event
        self.cwd = cwd
        self.workers: list[CeleryWorker] = [self._new(i) for i in range(count)]
        # a fault's heal and a supervisor may both replace the same dead worker at once: without
        # one lock, each starts a fresh one, one overwrites the other's slot, and that one is never
        # stopped (it outlives the stack)
        self._lock = threading.RLock()

    def _new(self, index: int) -> CeleryWorker:
        return self.factory(worker_name(index), command=self.command, values=self.values,
                            ready=self.ready, start_timeout=self.start_timeout, port=0,
                            workdir=self.workdir, env=self.env, cwd=self.cwd)

    def __getitem__(self, index: int) -> CeleryWorker:
        return self.workers[index]

    def __len__(self) -> int:
        return len(self.workers)

    def __iter__(self) -> Iterator[CeleryWorker]:
        return iter(self.workers)

    def holding(self, pid: int) -> CeleryWorker | None:
        """The running worker whose process tree holds ``pid`` (its main process or a pool child); None if none.

        How a fault or a scenario names the worker behind a paid call's
        ``X-Caller-Pid`` or a failpoint's firing process.
        """
        for worker in self.workers:
            if worker.pid is not None and worker.is_running() and pid in process_tree(worker.pid):
                return worker
        return None

    def _emit(self, name: str, worker: CeleryWorker, **data: Any) -> None:
        if self.on_event:
            self.on_event(name, worker, {"worker": worker.name, "pid": worker.pid, **data})

    def start(self) -> None:
        with self._lock:
            pending = [w for w in self.workers if not w.is_running()]
            start_all(pending)
            for worker in pending:
                self._emit("ready", worker)

    def announce_ready(self) -> None:
        """Record every running worker as ready (for workers started along with the stack)."""
        for worker in self.workers:
            self._emit("ready", worker)

    def kill(self, index: int = 0, sig: int = signal.SIGKILL) -> CeleryWorker:
        """Signal one worker's whole process group (main process and pool children)."""
        with self._lock:
            worker = self.workers[index]
            pid = worker.pid
            worker.kill(sig)
            self._emit("killed", worker, pid=pid, signal=signal.Signals(sig).name)
            return worker

    def replace(self, index: int) -> CeleryWorker:
        """Reap worker ``index`` (dead or alive) and start a fresh one in its place."""
        with self._lock:
            old = self.workers[index]
            if old.is_running():
                old.stop()
            self._emit("exited", old)
            fresh = self._new(index)
            self.workers[index] = fresh
            fresh.start()
            self._emit("ready", fresh)
            return fresh

    def replace_dead(self, keep: Iterable[int] = ()) -> list[int]:
        """Replace every worker that is not running (but those in ``keep``); return their indexes."""
        with self._lock:
            kept = set(keep)
            dead = [i for i, w in enumerate(self.workers) if not w.is_running() and i not in kept]
            for i in dead:
                self.replace(i)
            return dead

    def scale(self, count: int) -> None:
        with self._lock:
            while len(self.workers) > count:
                self.workers.pop().stop()
            while len(self.workers) < count:
                self.workers.append(self._new(len(self.workers)))
            self.start()

    def stop(self) -> None:
        with self._lock:
            for worker in self.workers:
                worker.stop()
