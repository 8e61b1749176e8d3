"""ContainerService: the Service contract carried out with a Docker container instead of a process.

It subclasses ProcessService so each docker service can inherit the probes,
clients and hooks of its process twin (``class DockerRedis(RedisService,
ContainerService)``); only the lifecycle differs. Containers share the host's
network (every server on 127.0.0.1:<free port>, as in the process backend)
and its PID namespace, so ``pid`` is a host pid: failpoint triggers, process
groups and ``/proc`` mean the same thing in both backends, and a failpoint's
``kill`` of its own group ends the worker as it would a local one.
"""
from __future__ import annotations

import os
import signal
from typing import Any, Sequence

from harness._wait import wait_until
from harness.errors import ServiceError, WaitTimeout
from harness.stack.container_host import Mount, in_image, local_start_ticks, process_alive
from harness.stack.engine import Engine, EngineUnavailable, read_logs, remove_quietly, unique_name
from harness.stack.process import HOST, LOG_TAIL_LINES, ProcessService

BRIDGE_BIND = "0.0.0.0"  # inside its own namespace, a server must accept the published port's traffic


class ContainerService(ProcessService):
    """A service run as one container; subclasses give its command (and inherit probe/after_ready)."""

    image_key = "docker image"  # the config key naming the image, for error hints
    keep_on_stop = False  # True: stop() keeps the container (its data) for the next start
    dials_out = False  # True: it connects to 127.0.0.1 addresses of other services, so stays on the host network

    def __init__(self, name: str, *, image: str, engine: Engine, network: str = "host",
                 mounts: Sequence[Mount] = (), **kwargs: Any):
        super().__init__(name, **kwargs)
        self.port_handover = False  # a container binds its own port (no descriptor crosses into it)
        self.image = image
        self.engine = engine
        self.network = "host" if self.dials_out else network
        self.mounts = list(mounts)
        self._container: Any = None
        self._pid: int | None = None
        self._earlier_logs = b""  # output of this service's removed containers
        self._ticks: str | None = None  # start time of the main process, when it runs on this kernel

    # -- what subclasses may change ------------------------------------------------
    def container_command(self) -> list[str]:
        """The command, with the host's interpreter replaced by the image's."""
        cmd = in_image(self.command())
        if self.network == "bridge":
            cmd = [BRIDGE_BIND if arg == HOST else arg for arg in cmd]
        return cmd

    def container_env(self) -> dict[str, str]:
        return dict(self.extra_env)

    def working_dir(self) -> str | None:
        return None

    # -- lifecycle -----------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """Host pid of the container's main process (shared PID namespace)."""
        return self._pid

    @property
    def container_name(self) -> str | None:
        return self._container.name if self._container is not None else None

    def spawn(self) -> None:
        try:
            client = self.engine.client()
        except EngineUnavailable as exc:
            raise self.error(exc.reason) from exc
        if self._container is not None and not self.keep_on_stop:
            self.remove()  # the exited container of an earlier kill
        if self._container is None:
            self._container = self._create(client)
        try:
            self._container.start()
            self._container.reload()
        except Exception as exc:  # noqa: BLE001 - e.g. a mount that cannot be made
            error = self.error(f"container did not start: {exc}")
            self.remove()
            raise error from exc
        self._pid = self._container.attrs["State"]["Pid"] or None
        self._ticks = local_start_ticks(self._pid, self._container.id)
        self._paused = False

    def _create(self, client: Any) -> Any:
        from docker.errors import APIError, ImageNotFound

        try:
            return client.containers.create(self.image, **self._create_args())
        except ImageNotFound as exc:
            raise self.error(f"image {self.image!r} is not on this engine: build it with "
                             f"scripts/build-images.sh, pull it, or set {self.image_key}") from exc
        except APIError as exc:
            raise self.error(f"cannot create a container from {self.image!r}: {exc.explanation or exc}") from exc

    def _create_args(self) -> dict[str, Any]:
        from docker.types import Mount as DockerMount

        args: dict[str, Any] = {
            "command": self.container_command(),
            "name": unique_name(self.name, self.port),
            "labels": self.engine.labels(self.name),
            "environment": self.container_env(),
            "pid_mode": "host",
            "stop_signal": signal.Signals(self.stop_signal).name,
            "mounts": [DockerMount(m.target or m.path, m.path, type="bind", read_only=m.read_only)
                       for m in self.mounts],
            "working_dir": self.working_dir(),
            "detach": True,
        }
        if self.network == "host":
            args["network_mode"] = "host"
        else:
            args["ports"] = {f"{self.port}/tcp": (HOST, self.port)}
        return args

    def discard_failed_start(self) -> None:
        self.remove()  # nothing of a failed start stays behind, kept data included

    def _state(self) -> dict[str, Any] | None:
        from docker.errors import NotFound

        if self._container is None:
            return None
        try:
            self._container.reload()
        except NotFound:
            return None
        return self._container.attrs["State"]

    def exit_code(self) -> int | None:
        """The main process's exit status, once the engine has recorded it."""
        try:
            wait_until(lambda: not self._engine_running(), timeout=5, what=f"{self.name} exit recorded")
        except WaitTimeout:
            return None
        state = self._state()
        return state["ExitCode"] if state else None

    def is_running(self) -> bool:
        """Alive (paused counts): read from /proc where the engine is local, so polling loops do
        not load the engine while it is busy starting containers; otherwise asked of the engine."""
        if self._container is None:
            return False
        if self._ticks is not None:
            return process_alive(self._pid, self._ticks)
        return self._engine_running()

    def _engine_running(self) -> bool:
        state = self._state()
        return bool(state and state["Running"])

    def stop(self, timeout: float | None = None) -> None:
        if self._container is None:
            return
        timeout = self.stop_timeout if timeout is None else timeout
        self.resume()  # a frozen process cannot handle its stop signal
        if self.is_running():
            self._signal_group(self.stop_signal)
            try:
                wait_until(lambda: not self._engine_running(), timeout=timeout, interval=0.02,
                           what=f"{self.name} to stop")
            except WaitTimeout:
                self._container.kill()
                wait_until(lambda: not self._engine_running(), timeout=10, what=f"{self.name} to die")
        if not self.keep_on_stop:
            self.remove()
        self._paused = False

    def remove(self) -> None:
        """Remove the container whatever its state, keeping its output for ``logs()``."""
        container, self._container = self._container, None
        if container is None:
            return
        try:
            self._earlier_logs += read_logs(container)
        finally:
            remove_quietly(container)
        self._paused = False

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if not self.is_running():
            raise self.error(f"cannot send signal {signal.Signals(sig).name}: not running")
        self.resume()
        self._signal_group(sig)
        if sig == signal.SIGKILL:
            wait_until(lambda: not self._engine_running(), timeout=10, what=f"{self.name} container to exit")

    def pause(self) -> None:
        if not self.is_running():
            raise self.error("cannot pause: not running")
        self._container.pause()  # the cgroup freezer: no signal the process could notice
        self._paused = True

    def resume(self) -> None:
        if self._paused and self._container is not None:
            self._container.unpause()
        self._paused = False

    def _signal_group(self, sig: int) -> None:
        """Signal the main process's whole group, as the process backend does (a prefork pool's
        children get the stop signal too); through the engine where the group is not ours to signal."""
        try:
            if self._pid:
                os.killpg(self._pid, sig)
                return
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        self._container.kill(signal=signal.Signals(sig).name)

    # -- logs and errors -----------------------------------------------------------
    def _all_logs(self) -> bytes:
        current = read_logs(self._container) if self._container is not None else b""
        return self._earlier_logs + current

    def logs(self, tail: int | None = None) -> str:
        text = self._all_logs().decode(errors="replace")
        return text if tail is None else "\n".join(text.splitlines()[-tail:])

    def log_offset(self) -> int:
        return len(self._all_logs())

    def logs_since(self, offset: int) -> str:
        return self._all_logs()[offset:].decode(errors="replace")

    def error(self, message: str, cls: type[ServiceError] = ServiceError) -> ServiceError:
        try:
            cmd: list[str] | None = self.container_command()
        except Exception:  # noqa: BLE001 - the command itself may be what is broken
            cmd = None
        where = f"image {self.image}"
        if self.container_name:
            where += f", container {self.container_name}"
        return cls(f"{message} ({where})", service=self.name, command=cmd,
                   address=f"{HOST}:{self.port}", log_tail=self.logs(tail=LOG_TAIL_LINES))
