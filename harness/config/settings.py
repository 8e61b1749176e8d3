"""``Config``: the effective configuration, one typed field per key of the option table."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, Mapping

from harness.config.options import OPTIONS

__all__ = ["Config"]


@dataclass(frozen=True)
class Config:
    """The effective configuration: one typed field per key of ``OPTIONS`` (its help says what it
    does), ``sources[key]`` where each value came from, ``root`` the project folder.

    Made by ``resolve`` (``jobquake config`` prints it); frozen: a run's settings do not change.
    """

    backend: Literal["process", "docker"]
    seed: int
    time_scale: float
    artifacts: str
    workers: int
    worker_command: str
    worker_ready: str
    start_timeout: float
    settle_timeout: float
    schema: str
    budgets: str
    job_table: str
    job_id_column: str
    job_state_column: str
    job_reason_column: str
    job_attempt_column: str
    job_heartbeat_column: str
    terminal_states: tuple[str, ...]
    redis_binary: str
    postgres_bindir: str
    postgres_max_connections: int
    paidapi_profile: str
    proxied: tuple[str, ...]
    docker_host: str
    docker_network: Literal["host", "bridge"]
    docker_redis_image: str
    docker_postgres_image: str
    docker_sqs_image: str
    docker_proxy_image: str
    docker_paidapi_image: str
    docker_app_image: str
    scenarios: str
    mutants: str
    mutant_env: str
    env: dict[str, Any]
    processes: dict[str, Any]
    queues: tuple[dict[str, Any], ...]
    sqs: Literal["moto", "localstack"]
    docker_localstack_image: str
    on_unknown: Literal["fail", "warn"]
    pending_queries: tuple[str, ...]
    call_key: str
    call_key_header: str
    paidapi_prices: dict[str, Any]
    instrument: bool
    job_id_from: str
    job_updated_column: str
    nightly: dict[str, Any]
    app_zygote: bool
    app_preload: tuple[str, ...]
    limits: str
    results_query: str
    paid_hosts: dict[str, str]
    scale_paid_call_timeouts: tuple[float, ...]
    celery: dict[str, Any]
    status_stream: str
    job_status_stream: str
    sweep_predicate: str
    sources: Mapping[str, str] = field(default_factory=dict, repr=False)
    root: Path = Path(".")
    # keys of OPTIONS that have no field above yet: still readable as attributes
    more: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_values(cls, values: Mapping[str, Any], sources: Mapping[str, str] | None = None,
                    root: Path = Path(".")) -> "Config":
        """A Config of parsed ``values`` (key -> value); keys without a field go to ``more``."""
        return cls(**{k: v for k, v in values.items() if k in _FIELDS}, sources=dict(sources or {}), root=root,
                   more={k: v for k, v in values.items() if k not in _FIELDS})

    def __getattr__(self, key: str) -> Any:
        more = self.__dict__.get("more") or {}
        if key in more:
            return more[key]
        raise AttributeError(f"{type(self).__name__!r} has no setting {key!r}")

    @property
    def values(self) -> dict[str, Any]:
        """Every setting, key -> value, in the order of ``OPTIONS``."""
        return {opt.key: getattr(self, opt.key) for opt in OPTIONS}

    def describe(self) -> list[tuple[str, Any, str]]:
        """(key, value, where it came from) for every setting, in the order of ``OPTIONS``."""
        return [(opt.key, getattr(self, opt.key), self.sources[opt.key]) for opt in OPTIONS]


_FIELDS = frozenset(f.name for f in fields(Config)) - {"sources", "root", "more"}
