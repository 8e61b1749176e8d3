"""The whole stack of one session: infrastructure, fault proxy, paid API, app processes, workers.

Start-up runs in two waves, each in parallel: first the infrastructure
(Redis, Postgres, SQS, paid API, proxy), then, once the proxy routes exist,
the app's processes and workers, whose environment points at them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from harness._ports import free_port, release_port
from harness.config import Config
from harness.errors import ConfigError, ServiceError
from harness.evidence import prepare_template
from harness.evidence.statements import install_statement_stats
from harness.stack.app import AppProcess
from harness.stack.backends import backend_for
from harness.stack.front import attach_fronts, routed
from harness.stack.paidapi import PaidAPIService
from harness.stack.postgres import PostgresService
from harness.stack.process import ProcessService, start_all, stop_all
from harness.stack.database_values import database_values
from harness.stack.proxy import ProxyService
from harness.stack.readiness import ReadyCheck
from harness.stack.redis import RedisService
from harness.stack.schema import schema_builder
from harness.stack.sqs import QueueSpec, SQSService
from harness.stack.worker import WorkerPool

if TYPE_CHECKING:
    from harness.failpoints.control import FailpointControl
    from harness.instrument.control import InstrumentControl

__all__ = ["PROCESS_KEYS", "PROXYABLE", "Stack"]

PROXYABLE = ("paidapi", "redis", "postgres", "sqs")
PROCESS_KEYS = {"command", "ready", "start_timeout", "instrument", "replicas"}
MAX_REPLICAS = 8


def replica_names(name: str, count: int) -> list[str]:
    """The stack's names of ``count`` replicas of process ``name``: ``name``, ``name-2``, ``name-3``..."""
    return [name if i == 1 else f"{name}-{i}" for i in range(1, count + 1)]


def replicas_of(name: str, spec: Any) -> int:
    """How many replicas config asks of process ``name`` (``replicas``, default 1)."""
    count = spec.get("replicas", 1) if isinstance(spec, dict) else 1
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_REPLICAS:
        raise ConfigError(f"processes.{name}.replicas: expected a whole number from 1 to {MAX_REPLICAS}, "
                          f"got {count!r}", key=f"processes.{name}")
    return count


class Stack:
    """Every service of a session, built from one Config."""

    config: Config
    redis: RedisService  # each backend's service is a subclass of the process backend's
    postgres: PostgresService
    sqs: SQSService
    paidapi: PaidAPIService
    proxy: ProxyService
    processes: dict[str, AppProcess]  # the app's own processes (api, relay, sweeper...), by name
    workers: WorkerPool
    values: dict[str, Any]

    def __init__(self, config: Config, workdir: Path,
                 on_worker_event: Callable[[str, Any, dict[str, Any]], None] | None = None):
        self.config = config
        self.workdir = Path(workdir)
        bad = set(config.proxied) - set(PROXYABLE)
        if bad:
            raise ConfigError(f"proxied: cannot proxy {sorted(bad)}; choose from {PROXYABLE}", key="proxied")
        self.backend = backend = backend_for(config)
        schema = self._template_builder(config)  # called once the stack's values exist

        def common(name: str) -> dict[str, Any]:
            return {"port": free_port(), "workdir": self.workdir / name}

        self.redis = backend.redis("redis", **common("redis"))
        self.postgres = backend.postgres("postgres", schema=schema,
                                         max_connections=config.postgres_max_connections, **common("postgres"))
        self.sqs = backend.sqs("sqs", queues=[_queue(q) for q in config.queues], **common("sqs"))
        self.paidapi = backend.paidapi("paidapi", seed=config.seed, time_scale=config.time_scale,
                                       profile=config.paidapi_profile, call_key=config.call_key,
                                       call_key_header=config.call_key_header,
                                       prices=config.paidapi_prices, **common("paidapi"))
        upstreams = {"paidapi": self.paidapi, "redis": self.redis, "postgres": self.postgres, "sqs": self.sqs}
        self.proxy_ports = {name: free_port() for name in routed(config.proxied, upstreams)}
        self.proxy = backend.proxy("proxy", seed=config.seed, **common("proxy"), routes={
            name: (port, upstreams[name].proxy_upstream) for name, port in self.proxy_ports.items()})
        attach_fronts(self.proxy, upstreams, self.proxy_ports)
        # both channels owner-only: app processes run as our uid, app containers as root (the app
        # image sets no USER), which reaches a 0700 folder; an app of another uid needs group=
        self.failpoints = _failpoint_control(self.workdir / "failpoints")
        self.instrument = _instrument_control(self.workdir / "instrument") if config.instrument else None
        self._app_ports = {name: free_port() for name in config.processes}
        self.values = self._values()
        self.plain_env = self._env()
        self.env = self._instrumented(self.plain_env)
        # production runs several relays, sweepers, consumers: config's replicas = N runs N of a process
        self.processes = {replica: self._app_process(replica, spec) for name, spec in config.processes.items()
                          for replica in replica_names(name, replicas_of(name, spec))}
        self.workers = WorkerPool(
            factory=backend.worker, command=config.worker_command, values=self.values, count=config.workers if config.worker_command else 0,
            workdir=self.workdir / "workers", env=self.env, ready=ReadyCheck.parse(config.worker_ready),
            start_timeout=config.start_timeout, on_event=on_worker_event, cwd=config.root)

    # -- assembly ------------------------------------------------------------------
    def _template_builder(self, config: Config) -> Callable[[str], None] | None:
        """The app's schema (``stack/schema.py``), then the state-log trigger on its job table, in the template DB."""
        if not config.schema:
            return None
        schema = schema_builder(config.schema, config.root, self._env_for_database)

        def build(url: str) -> None:
            schema(url)
            dsn = url.replace("postgresql+psycopg://", "postgresql://", 1)
            prepare_template(config, dsn)  # a wrong job_* key fails here, naming the columns that exist
            install_statement_stats(dsn)  # every test's copy counts its statements (harness.work)
        return build

    def _env_for_database(self, url: str) -> dict[str, str]:
        """The app's environment (no instrumentation) with its database URLs pointing at ``url``."""
        values = {**self.values, **database_values(url)}
        return {**os.environ, **self._env(values)}

    @property
    def infrastructure(self) -> list[ProcessService]:
        return [self.redis, self.postgres, self.sqs, self.paidapi, self.proxy]

    def services(self) -> list[ProcessService]:
        """Every service of the stack: infrastructure, app processes, then workers."""
        return [*self.infrastructure, *self.processes.values(), *self.workers.workers]

    def service_names(self) -> list[str]:
        """The names ``service()`` takes, in the order of ``services()``."""
        return [svc.name for svc in self.services()]

    def service(self, name: str) -> ProcessService:
        """The service, app process or worker called ``name`` (``"redis"``, ``"relay"``, ``"worker1"``).

        A control, not a fault: stopping or pausing what this returns is not
        recorded in the history and not healed (use ``jq.faults.stop_service``
        / ``pause_service`` for that). ``ServiceError`` names the known services.
        """
        for svc in self.services():
            if svc.name == name:
                return svc
        raise ServiceError(f"no service {name!r}; known: {', '.join(self.service_names())}", service=str(name))

    def _via_proxy(self, name: str, service: ProcessService) -> int:
        return self.proxy_ports.get(name, service.port)

    def _values(self) -> dict[str, Any]:
        host = "127.0.0.1"
        pg_port = self.proxy_ports.get("postgres")  # None: the server's own address (a private socket)
        values = {
            "redis_url": self.redis.url_for(self.proxy_ports.get("redis")),
            **database_values(self.postgres.url_for("app", port=pg_port)),
            "sqs_endpoint": f"http://{host}:{self._via_proxy('sqs', self.sqs)}",
            "paidapi_url": f"http://{host}:{self._via_proxy('paidapi', self.paidapi)}",
            "paidapi_direct_url": self.paidapi.url,
            "proxy_url": self.proxy.url,
            "time_scale": self.config.time_scale,
            "seed": self.config.seed,
            "failpoints_dir": str(self.failpoints.path),
            "region": "us-east-1",
            "root": str(self.config.root),
        }
        values.update({f"{name}_url": f"http://{host}:{port}" for name, port in self._app_ports.items()})
        values.update(url_parts(values["redis_url"], "redis"))
        return values

    def app_environment(self) -> dict[str, str]:
        """The environment the app's processes run with: the harness's own, then config's ``env`` rendered."""
        return {**os.environ, **self._env()}

    def _env(self, values: dict[str, Any] | None = None) -> dict[str, str]:
        env = dict(self.failpoints.env())
        for var, template in self.config.env.items():
            try:
                env[var] = str(template).format_map(self.values if values is None else values)
            except (KeyError, ValueError) as exc:
                raise ConfigError(f"env.{var} = {template!r}: unknown value {exc}; known: "
                                  f"{', '.join(sorted(self.values))}", key=f"env.{var}") from exc
        return env

    def _instrumented(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` plus what loads the instrumentation (PYTHONPATH: ours first, then the app's)."""
        if self.instrument is None:
            return env
        from harness.instrument.control import settings_for

        pythonpath = env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        settings = settings_for(self.config, brokers=[self.values["redis_url"], self.redis.url],
                                databases=[self.values["database_url"], self.postgres.url_for("app")])
        return {**env, **self.instrument.env(paidapi_url=self.values["paidapi_url"],
                                             job_id_from=self.config.job_id_from, pythonpath=pythonpath,
                                             settings=settings)}

    def _app_process(self, name: str, spec: Any) -> AppProcess:
        if not isinstance(spec, dict) or "command" not in spec:
            raise ConfigError(f"processes.{name}: expected a table with 'command'", key=f"processes.{name}")
        unknown = set(spec) - PROCESS_KEYS
        if unknown:
            raise ConfigError(f"processes.{name}: unknown keys {sorted(unknown)}; known: {sorted(PROCESS_KEYS)}",
                              key=f"processes.{name}")
        if not isinstance(spec.get("instrument", True), bool):
            raise ConfigError(f"processes.{name}.instrument: expected true or false, got {spec['instrument']!r}",
                              key=f"processes.{name}")
        if name not in self._app_ports:  # a replica's own port (a port claimed and not used would stay claimed)
            self._app_ports[name] = free_port()
        return self.backend.app_process(name, command=spec["command"], values=self.values,
                          ready=ReadyCheck.parse(spec.get("ready", "tcp")),
                          start_timeout=float(spec.get("start_timeout", self.config.start_timeout)),
                          port=self._app_ports[name], workdir=self.workdir / "app",
                          env=self.env if spec.get("instrument", True) else self.plain_env,
                          cwd=self.config.root)

    # -- lifecycle -----------------------------------------------------------------
    def start(self) -> None:
        """Infrastructure and workers start together (a worker waits for its broker by itself and
        touches the database only when a task runs); app processes start once the database holds
        its schema, since a server may read it at start-up."""
        try:
            self.backend.reap()  # containers of killed runs (processes: reaped by the session)
            start_all([*self.infrastructure, *self.workers.workers], self.config.start_timeout)
            self.workers.announce_ready()
            start_all(list(self.processes.values()))
        except BaseException:
            self.stop()
            raise

    def reset(self) -> None:
        """Give the next test a clean world: empty broker, fresh DB, no toxics, empty ledger."""
        self.failpoints.reset()
        if self.instrument is not None:
            self.instrument.reset()
        self.proxy.reset()  # the session's routes, without toxics; the paid API's settings, without rules
        self.paidapi.reset()
        # the fresh database first: an app process still sending the last test's outbox rows
        # sends them before the broker and the queues are emptied, never after
        self.postgres.reset()
        self.redis.reset()
        self.sqs.reset()
        for proc in self.processes.values():
            if not proc.is_running():
                proc.start()
        self.workers.replace_dead()

    def scale(self, counts: Mapping[str, int] | None = None) -> None:
        """Run ``counts[name]`` replicas of each app process named there, config's ``replicas`` of the others:
        the missing ones are started (in parallel), the ones over the count stopped."""
        counts = dict(counts or {})
        unknown = sorted(set(counts) - set(self.config.processes))
        if unknown:
            raise ConfigError(f"replicas of unknown process(es) {unknown}; known: {sorted(self.config.processes)}",
                              key="processes")
        wanted: dict[str, Any] = {}
        for name, spec in self.config.processes.items():
            count = replicas_of(name, {"replicas": counts[name]} if name in counts else spec)
            wanted.update(dict.fromkeys(replica_names(name, count), spec))
        extra = [proc for replica, proc in self.processes.items() if replica not in wanted]
        stop_all(extra)
        for proc in extra:
            del self.processes[proc.name]
        new = {replica: self._app_process(replica, spec) for replica, spec in wanted.items()
               if replica not in self.processes}
        self.processes.update(new)
        start_all(list(new.values()))

    def stop(self, timeout: float | None = None) -> None:
        """App processes and workers first (they use the infrastructure), each wave in parallel.

        ``timeout``: seconds each service may take to stop gracefully before it is
        killed (default: its own; short when the run is stopping on a signal).
        """
        stop_all([*self.workers.workers, *self.processes.values()], timeout)
        stop_all(self.infrastructure, timeout)
        for svc in self.services():
            svc.release()  # each service's port: the socket held for it, and the claim
        for port in [*self.proxy_ports.values()]:
            release_port(port)
        self.backend.close()

    def __enter__(self) -> "Stack":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def url_parts(url: str, prefix: str) -> dict[str, Any]:
    """``{prefix}_host``, ``_port``, ``_user``, ``_password``, ``_name`` of ``url``: for an app that reads
    its broker as separate settings (``REDIS_HOST``, ``REDIS_PORT``, ``REDIS_PASSWORD``...; the database's
    parts are ``database_values``)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return {f"{prefix}_host": parts.hostname, f"{prefix}_port": parts.port, f"{prefix}_user": parts.username or "",
            f"{prefix}_password": parts.password or "", f"{prefix}_name": parts.path.lstrip("/")}


def _queue(spec: Any) -> QueueSpec:
    try:
        return QueueSpec.from_dict(spec)
    except TypeError as exc:
        raise ConfigError(f"queues: bad queue {spec!r}: {exc}", key="queues") from exc


def _instrument_control(path: Path) -> InstrumentControl:
    from harness.instrument.control import InstrumentControl

    return InstrumentControl.create(path)


def _failpoint_control(path: Path) -> FailpointControl:
    from harness.failpoints.control import FailpointControl

    return FailpointControl.create(path)
