"""The process backend: each service is a local subprocess in its own process group.

Every process is recorded in its owner's run folder. A run that is
SIGKILLed cannot clean up after itself; the next run finds its recorded
processes, sees their owner is gone, and reaps them (see ``reaper.py``).

The harness's own servers (paid API, fault proxy, moto) do not bind their
port: the harness binds it before they start and hands them the listening
socket (``port_handover``). No other local user can take the port between the
server's start and its bind, though the port is on its command line; and
when the server stops, the socket stops listening but stays bound (see
``harness.proxy.holding``), so the port is still the harness's when it starts
again on the same socket.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any, BinaryIO, Mapping, Sequence

from harness._ports import release_port
from harness._private_dir import private_dir
from harness._wait import wait_until
from harness.errors import ServiceError
from harness.proxy.holding import bind_held, relisten, unlisten
from harness.stack import reaper
from harness.stack.server_user import popen_identity

HOST = "127.0.0.1"
LOG_TAIL_LINES = 30


class ProcessService:
    """A service run as a local process group; subclasses say how to build and probe it."""

    name: str = "service"
    scheme: str = "tcp"
    start_timeout: float = 30.0
    stop_timeout: float = 10.0
    stop_signal: int = signal.SIGTERM
    port_handover: bool = False  # True: the harness binds the port and the server takes the socket (--fd)

    def __init__(self, name: str, *, port: int, workdir: Path, env: Mapping[str, str] | None = None):
        self.name = name
        self._port = port
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / f"{name}.log"
        self.extra_env = dict(env or {})
        self.cwd = self.workdir
        self._proc: Any = None  # a subprocess.Popen, or a handle like it (see launch)
        self._paused = False
        self.front: Any = None  # a Front: the proxy's route the app reaches it by, held while it is down
        self._listener: socket.socket | None = None  # the handed-over socket, bound while this service lives

    # -- what subclasses provide -------------------------------------------------
    def command(self) -> list[str]:
        raise NotImplementedError

    def probe(self) -> bool:
        """One readiness check; may raise (counts as not ready)."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Hook run before the process starts (data dirs, config files)."""

    def after_ready(self) -> None:
        """Hook run once the service answers (create queues, databases...)."""

    def run_as(self) -> str | None:
        """Unix user to run as (None: the current user)."""
        return None

    # -- the Service contract ------------------------------------------------------
    @property
    def host(self) -> str:
        return HOST

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"{self.scheme}://{HOST}:{self._port}"

    @property
    def address(self) -> str:
        """Where it listens: host:port, or the path of its Unix socket."""
        return f"{HOST}:{self._port}"

    @property
    def proxy_upstream(self) -> str:
        """What the fault proxy connects to to reach it: ``host:port`` or ``unix:/path``."""
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> None:
        if self.is_running():
            return
        self.prepare()
        self.spawn()
        self.wait_ready()
        self.after_ready()

    def listen_fd(self) -> str:
        """The descriptor of the handed-over socket, as the server's command names it."""
        return str(self._listener.fileno()) if self._listener is not None else "<fd>"

    def release(self) -> None:
        """Give the port back, socket and claim (the stack is done with this service)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        release_port(self._port)

    def _hold(self) -> None:
        """Refuse connections from now on, keeping the address (the service is going away)."""
        if self.front is not None:
            self.front.hold()
        if self._listener is not None:
            unlisten(self._listener)

    def spawn(self) -> None:
        """Start the process without waiting for readiness (the stack starts services in parallel)."""
        if self.port_handover:
            if self._listener is None:
                try:
                    self._listener = bind_held(HOST, self._port)
                except OSError as exc:
                    raise self.error(f"cannot bind {HOST}:{self._port}: {exc.strerror or exc}") from exc
            relisten(self._listener)
        cmd = self.command()
        reaper.adopt_orphans()
        env = {**os.environ, **self._temporary_folder(), **self.extra_env}
        log = open(self.log_path, "ab")
        try:
            self._proc = self.launch(cmd, env, log)
        except FileNotFoundError as exc:
            raise self.error(f"cannot run {cmd[0]!r}: {exc.strerror}") from exc
        finally:
            log.close()
        reaper.record(self._proc.pid)
        self._paused = False

    def _temporary_folder(self) -> dict[str, str]:
        """``TMPDIR`` in the run folder, for a process run as us: what it leaves there when it is killed
        (a Celery pool's ``pymp-*`` folders) goes with the run folder, not into the machine's /tmp."""
        if self.run_as() is not None:
            return {}
        return {"TMPDIR": str(private_dir(reaper.run_dir() / "tmp"))}

    def launch(self, cmd: list[str], env: dict[str, str], log: BinaryIO) -> Any:
        """Start ``cmd`` in a session of its own, output to ``log``: a ``Popen`` or what quacks like one
        (``pid``, ``poll``, ``wait``)."""
        handed = (self._listener.fileno(),) if self._listener is not None else ()
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, pass_fds=handed,
                                env=env, cwd=self.cwd, start_new_session=True, **popen_identity(self.run_as()))

    def wait_ready(self, timeout: float | None = None, cancel: threading.Event | None = None) -> None:
        """Poll until the service answers; ServiceError (with its log) when it exits or times out.

        ``cancel`` set: give up at once and leave nothing (another service of the
        stack failed, or the run is stopping); raises ``StartCancelled``.
        """
        timeout = self.start_timeout if timeout is None else timeout

        def ready() -> bool:
            if cancel is not None and cancel.is_set():
                raise StartCancelled(self.name)
            if not self.is_running():
                raise _Exited()
            return self.probe()

        try:
            wait_until(ready, timeout=timeout, what=f"{self.name} readiness", abort_on=(_Exited, StartCancelled))
            if self.front is not None:
                self.front.open()
        except StartCancelled:
            self.discard_failed_start()
            raise
        except Exception as exc:
            exited = isinstance(exc, _Exited)
            reason = (f"exited at once with code {self.exit_code()}" if exited
                      else f"did not become ready within {timeout:.1f}s")
            error = self.error(reason)  # the log tail, read before the clean-up
            self.discard_failed_start()
            raise error from (None if exited else exc.__cause__)

    def exit_code(self) -> int | None:
        """The exit status of a process that has ended (None while it runs)."""
        return self._proc.poll() if self._proc else None

    def discard_failed_start(self) -> None:
        """Leave nothing of a start that failed."""
        self.stop(timeout=2.0)

    def stop(self, timeout: float | None = None) -> None:
        proc = self._proc
        if proc is None:
            return
        timeout = self.stop_timeout if timeout is None else timeout
        self._hold()  # refused from now on, as by a stopped server; the address stays ours
        members = reaper.family(proc.pid)
        if proc.poll() is None:
            self._signal_group(signal.SIGCONT)  # a paused process cannot handle SIGTERM
            self._signal_group(self.stop_signal)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                proc.wait(5)
        self._signal_group(signal.SIGKILL)  # children that outlived their leader
        reaper.collect(members, leader=proc.pid)
        reaper.forget(proc.pid)
        self._paused = False

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if not self.is_running():
            raise self.error(f"cannot send signal {signal.Signals(sig).name}: not running")
        members = reaper.family(self._proc.pid)
        if sig == signal.SIGKILL:
            self._hold()
        self._signal_group(sig)
        if sig == signal.SIGKILL:
            self._proc.wait(5)
            reaper.collect(members, leader=self._proc.pid)

    def pause(self) -> None:
        if not self.is_running():
            raise self.error("cannot pause: not running")
        self._signal_group(signal.SIGSTOP)
        self._paused = True

    def resume(self) -> None:
        if self._paused:
            self._signal_group(signal.SIGCONT)
            self._paused = False

    def restart(self) -> None:
        self.stop()
        self.start()

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def paused(self) -> bool:
        return self._paused

    def is_ready(self) -> bool:
        try:
            return self.is_running() and bool(self.probe())
        except Exception:  # noqa: BLE001 - a failed probe means "not ready"
            return False

    def logs(self, tail: int | None = None) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        if tail is None:
            return text
        return "\n".join(text.splitlines()[-tail:])

    def log_offset(self) -> int:
        """Current size of the log: pass it to ``logs_since`` to get one test's slice."""
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def logs_since(self, offset: int) -> str:
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(offset)
                return fh.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    # -- helpers -------------------------------------------------------------------
    def error(self, message: str, cls: type[ServiceError] = ServiceError) -> ServiceError:
        try:
            cmd: Sequence[str] | None = self.command()
        except Exception:  # noqa: BLE001 - the command itself may be what is broken
            cmd = None
        return cls(message, service=self.name, command=list(cmd) if cmd else None,
                   address=self.address, log_tail=self.logs(tail=LOG_TAIL_LINES))

    def _signal_group(self, sig: int) -> None:
        if self._proc is None:
            return
        try:
            os.killpg(self._proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> "ProcessService":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Exited(Exception):
    """The process ended before it became ready."""


class StartCancelled(Exception):
    """A start given up because another service of the stack failed (or the run is stopping)."""

    def __init__(self, service: str):
        super().__init__(f"start of {service} given up")
        self.service = service


def start_all(services: Sequence[ProcessService], timeout: float | None = None) -> None:
    """Start every service in its own thread; if any fails, stop them all and raise its error.

    Start-up is mostly waiting (a data dir copy, an interpreter importing its
    modules), so doing it in parallel makes the stack ready in about the time
    of its slowest service. The first failure (a server that exits because its
    port is taken, say) ends the other starts at once rather than after their
    own timeouts; so does an interruption of the caller (a stop signal).
    """
    errors: list[BaseException] = []
    give_up = threading.Event()

    def start_one(svc: ProcessService) -> None:
        try:
            if give_up.is_set():
                return
            svc.prepare()
            svc.spawn()
            svc.wait_ready(timeout, cancel=give_up)
            svc.after_ready()
        except StartCancelled:
            pass  # not a failure of its own: the one that caused it is reported
        except BaseException as exc:  # noqa: BLE001 - reported below, after every thread ends
            errors.append(exc)
            give_up.set()

    threads = [threading.Thread(target=start_one, args=(svc,), name=f"start-{svc.name}") for svc in services]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:
        give_up.set()  # interrupted: the starts end within a poll, then everything stops
        for thread in threads:
            thread.join()
        stop_all(services, timeout=2.0)
        raise
    if errors:
        stop_all(services, timeout=2.0)
        if len(errors) == 1:
            raise errors[0]
        raise ExceptionGroup(f"{len(errors)} services failed to start", errors)  # type: ignore[arg-type]


def stop_all(services: Sequence[ProcessService], timeout: float | None = None) -> None:
    """Stop every service, each in its own thread (a graceful stop is mostly waiting)."""
    threads = [threading.Thread(target=svc.stop, args=(timeout,), name=f"stop-{svc.name}") for svc in services]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
