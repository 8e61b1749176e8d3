"""The Docker engine as the docker backend sees it: a lazily made client, labels, leftovers.

Every container jobquake starts carries labels naming its owner (the pytest
or CLI process, as ``reaper.owner_id()`` writes it) and the machine. A run
that is SIGKILLed cannot remove its containers; the next run lists the
labelled containers of this machine whose owner is no longer alive and
removes them (the container counterpart of ``reaper.reap()``).
"""
from __future__ import annotations

import os
import secrets
import socket
import threading
from typing import Any

from harness.errors import ServiceError
from harness.stack import reaper

LABEL_OWNER = "jobquake.owner"
LABEL_HOST = "jobquake.host"
LABEL_SERVICE = "jobquake.service"
DEFAULT_SOCKET = "unix:///var/run/docker.sock"
START_HINT = "start one with scripts/start-dockerd.sh, or point docker_host / DOCKER_HOST at one"
API_TIMEOUT = 30  # seconds for one engine call; a stop waits for its own timeout on top


class EngineUnavailable(ServiceError):
    """No Docker engine answers where jobquake looked for one; ``reason`` says why, with a hint."""

    def __init__(self, reason: str, *, address: str | None = None):
        super().__init__(reason, service="docker", address=address)
        self.reason = reason


class Engine:
    """One connection to a Docker engine, made on first use and shared by every service."""

    def __init__(self, base_url: str = ""):
        self.base_url = base_url
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        return self.base_url or os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET

    def client(self) -> Any:
        """The docker SDK client; EngineUnavailable when the engine does not answer."""
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _connect(self) -> Any:
        try:
            import docker
        except ImportError as exc:
            raise EngineUnavailable(f"the docker SDK is not installed ({exc}); "
                                    f"pip install 'jobquake[docker]'") from exc
        try:
            client = (docker.DockerClient(base_url=self.base_url, timeout=API_TIMEOUT) if self.base_url
                      else docker.from_env(timeout=API_TIMEOUT))
            client.ping()
        except Exception as exc:  # noqa: BLE001 - the SDK raises several types for "nobody answers"
            raise EngineUnavailable(f"no Docker engine answers at {self.address}: {exc}; {START_HINT}",
                                    address=self.address) from exc
        return client

    def labels(self, service: str) -> dict[str, str]:
        """Labels of a container this process starts for ``service``."""
        return {LABEL_OWNER: reaper.owner_id(), LABEL_HOST: socket.gethostname(), LABEL_SERVICE: service}

    def owned(self, *, all_owners: bool = False) -> list[Any]:
        """Containers (running or not) labelled by this process, or by any owner on this machine."""
        wanted = [LABEL_OWNER] if all_owners else [f"{LABEL_OWNER}={reaper.owner_id()}"]
        # another session may remove one of them between the listing and its inspection: gone is not ours
        found = self.client().containers.list(all=True, filters={"label": wanted}, ignore_removed=True)
        host = socket.gethostname()
        return [c for c in found if c.labels.get(LABEL_HOST) == host]

    def reap(self) -> list[str]:
        """Remove the containers of dead owners on this machine; return their names."""
        removed = []
        for container in self.owned(all_owners=True):
            if reaper.owner_alive(container.labels.get(LABEL_OWNER, "")):
                continue
            if remove_quietly(container):
                removed.append(container.name)
        return removed

    def remove_owned(self) -> list[str]:
        """Remove every container this process started (a last resort at the end of a run)."""
        return [c.name for c in self.owned() if remove_quietly(c)]


def unique_name(service: str, port: int) -> str:
    """A container name that says whose it is and never collides with a replaced twin."""
    owner = reaper.owner_id().split("-", 1)[0]
    return f"jobquake-{owner}-{service}-{port or 'x'}-{secrets.token_hex(3)}"


def read_logs(container: Any) -> bytes:
    """Everything the container wrote to stdout and stderr, in order; empty once it is gone."""
    from docker.errors import NotFound

    try:
        return container.logs(stdout=True, stderr=True)
    except NotFound:
        return b""


def remove_quietly(container: Any) -> bool:
    """Force-remove a container; False when it was already gone."""
    from docker.errors import APIError, NotFound

    try:
        container.remove(force=True, v=True)
    except NotFound:
        return False
    except APIError as exc:
        if exc.status_code == 409:  # another caller is removing it already
            return False
        raise
    return True
