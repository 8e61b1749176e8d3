"""Backends: where services run. Each builds the same services behind the Service contract.

The stack asks its backend for each service by role; the process backend
(default) runs local processes, the docker backend (``harness.stack.docker``)
runs containers with the same ports, readiness checks and faults.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from harness.config import Config
from harness.errors import ConfigError
from harness.stack.app import AppProcess
from harness.stack.localstack import LocalStackSQS
from harness.stack.paidapi import PaidAPIService
from harness.stack.postgres import PostgresService
from harness.stack.proxy import ProxyService
from harness.stack.redis import RedisService
from harness.stack.sqs import SQSService
from harness.stack.worker import CeleryWorker
from harness.stack.zygote import DEFAULT_APP_PRELOAD, Zygote


class Backend(Protocol):
    """Factories of services; keyword arguments are those of the process classes, whose subclasses they return."""

    name: str

    def redis(self, name: str, **kw: Any) -> RedisService: ...
    def postgres(self, name: str, **kw: Any) -> PostgresService: ...
    def sqs(self, name: str, **kw: Any) -> SQSService: ...
    def paidapi(self, name: str, **kw: Any) -> PaidAPIService: ...
    def proxy(self, name: str, **kw: Any) -> ProxyService: ...
    def app_process(self, name: str, **kw: Any) -> AppProcess: ...
    def worker(self, name: str, **kw: Any) -> CeleryWorker: ...
    def reap(self) -> list[str]:
        """End what killed earlier runs left in this backend; return what was ended."""
    def close(self) -> None:
        """Release whatever the services left after stop() (kept containers); called last."""


class ProcessBackend:
    """Every service a local process (the embedded default)."""

    name = "process"

    def __init__(self, config: Config):
        self.config = config
        self.zygote: Zygote | None = None

    def redis(self, name: str, **kw: Any) -> RedisService:
        return RedisService(name, binary=self.config.redis_binary or None, **kw)

    def postgres(self, name: str, **kw: Any) -> PostgresService:
        return PostgresService(name, bindir=self.config.postgres_bindir or None, **kw)

    def sqs(self, name: str, **kw: Any) -> SQSService:
        if self.config.sqs == "localstack":
            return LocalStackSQS(name, **kw)
        return SQSService(name, **kw)

    def paidapi(self, name: str, **kw: Any) -> PaidAPIService:
        return PaidAPIService(name, **kw)

    def proxy(self, name: str, **kw: Any) -> ProxyService:
        return ProxyService(name, **kw)

    def app_process(self, name: str, **kw: Any) -> AppProcess:
        return AppProcess(name, zygote=self._zygote(kw["workdir"]), **kw)

    def worker(self, name: str, **kw: Any) -> CeleryWorker:
        return CeleryWorker(name, zygote=self._zygote(kw["workdir"]), **kw)

    def _zygote(self, workdir: Path) -> Zygote | None:
        """The stack's zygote (started with its first app process), or None with ``app_zygote = false``."""
        if self.zygote is None and self.config.app_zygote:
            self.zygote = Zygote([*DEFAULT_APP_PRELOAD, *self.config.app_preload], workdir)
        return self.zygote

    def reap(self) -> list[str]:
        return []  # processes are reaped by ``reaper.reap()`` before any stack is made

    def close(self) -> None:
        """End the zygote; nothing else to release: a stopped process leaves nothing running."""
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None


def backend_for(config: Config) -> Backend:
    if config.backend == "process":
        return ProcessBackend(config)
    if config.backend == "docker":
        try:
            from harness.stack.docker import DockerBackend
        except ImportError as exc:
            raise ConfigError(f"backend 'docker' is not available: {exc}", key="backend") from exc
        return DockerBackend(config)
    raise ConfigError(f"unknown backend {config.backend!r}", key="backend")
