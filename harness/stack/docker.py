"""The docker backend: every service a container, behind the same Service contract.

Each docker service inherits its process twin's probe, clients and hooks
(``after_ready`` creating queues or routes, Postgres' template database and
``reset()``) and only says how its container runs. Images are config keys
(``docker_*_image``); the defaults are the ``jobquake/*`` images that
``scripts/build-images.sh`` builds locally.

Code reaches containers by bind mounts, not by copies: the harness package is
mounted read-only (and put on PYTHONPATH ahead of the image's copy), the
app's project folder read-only at its own path (commands and values name
host paths), and the failpoint control directory read-write at its own path,
since the failpoint channel is that directory's files and an mmap of one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from harness.config import Config
from harness.failpoints.spec import ENV_VAR as FAILPOINTS_ENV
from harness.instrument import ENV_DIR as INSTRUMENT_ENV
from harness.stack.app import AppProcess
from harness.stack.container_host import Mount, code_mounts, env_with_path
from harness.stack.containers import BRIDGE_BIND, ContainerService
from harness.stack.engine import Engine
from harness.stack.localstack import RUNTIME_ENV as LOCALSTACK_ENV
from harness.stack.localstack import LocalStackSQS
from harness.stack.paidapi import PaidAPIService
from harness.stack.credentials import scram_verifier, session_password
from harness.stack.postgres import FAST_SETTINGS, SESSION_SETTINGS, SUPERUSER, PostgresService
from harness.stack.process import HOST
from harness.stack.proxy import ProxyService
from harness.stack.redis import RedisService
from harness.stack.sqs import SQSService
from harness.stack.worker import CeleryWorker

HARNESS_PACKAGE = Path(__file__).resolve().parents[1]  # harness/, found without importing the package
# the socket inside the container trusts (only the container's processes reach it); TCP from
# anywhere (the bridge's gateway too) needs the session's password
DOCKER_HBA_RULES = ("# written by jobquake for this session\n"
                    "local all all trust\n"
                    "host all all all scram-sha-256\n")
# where the live harness package appears in containers (its parent goes on PYTHONPATH)
HARNESS_MOUNT = "/opt/jobquake-live"


def harness_mount() -> Mount:
    return Mount(str(HARNESS_PACKAGE), target=f"{HARNESS_MOUNT}/harness")


# where a service's private files (its config with the session's secret) appear in its container
CONFIG_MOUNT = "/etc/jobquake"


class DockerRedis(RedisService, ContainerService):
    """redis-server in a container, no persistence; the password in a mounted config file."""

    image_key = "docker_redis_image"
    # the server in the container may run as another uid (the official image's ``redis``): the file
    # is world-readable, and reachable only through the mount (its host folder is private)
    config_mode = 0o644

    def __init__(self, name: str, **kwargs: Any):
        ContainerService.__init__(self, name, **kwargs)  # not RedisService's: no host binary needed
        self.password = session_password()
        self.config_path = self.workdir / "redis.conf"
        self.mounts.append(Mount(str(self.config_path), target=f"{CONFIG_MOUNT}/redis.conf"))

    def command(self) -> list[str]:
        cmd = ["redis-server", f"{CONFIG_MOUNT}/redis.conf", "--bind", HOST, "--port", str(self.port),
               "--save", "", "--appendonly", "no"]
        if self.network == "bridge":  # clients arrive from the bridge's gateway, through a port on 127.0.0.1
            cmd += ["--protected-mode", "no"]
        return cmd


class DockerPostgres(PostgresService, ContainerService):
    """Postgres from an image holding an initialised cluster; ``app`` is reset from ``app_template``.

    The image's own authentication rules are replaced by a mounted ``pg_hba.conf``: the
    socket inside the container trusts, TCP needs the session's password. The password is
    set through that socket (``docker exec psql``) once the server answers, as a SCRAM
    verifier, since an exec's arguments are visible to every local user.
    """

    image_key = "docker_postgres_image"
    keep_on_stop = True  # a restart keeps the data, as the process backend's data dir does

    def __init__(self, name: str, *, max_connections: int = 60, schema: Any = None, **kwargs: Any):
        ContainerService.__init__(self, name, **kwargs)  # not PostgresService's: no host binaries needed
        self.max_connections = max_connections
        self.schema = schema
        self.used_template_cache = True  # the image's cluster was initialised when it was built
        self.password = session_password()
        self._password_given = False
        self.hba_path = self.workdir / "pg_hba.conf"
        self.mounts.append(Mount(str(self.hba_path), target=f"{CONFIG_MOUNT}/pg_hba.conf"))

    def command(self) -> list[str]:
        cmd = ["postgres", "-h", HOST, "-p", str(self.port), "-c", f"max_connections={self.max_connections}",
               "-c", f"hba_file={CONFIG_MOUNT}/pg_hba.conf"]
        for key, value in {**FAST_SETTINGS, **SESSION_SETTINGS}.items():
            cmd += ["-c", f"{key}={value}"]
        return cmd

    def container_env(self) -> dict[str, str]:
        # what the official image needs to start without a password; ignored by jobquake/postgres
        return {**super().container_env(), "POSTGRES_HOST_AUTH_METHOD": "trust"}

    def prepare(self) -> None:
        """Nothing to copy (the cluster is in the image): only the rules of who may log in."""
        self.hba_path.write_text(DOCKER_HBA_RULES)
        self.hba_path.chmod(0o644)  # read by the image's postgres user, through the mount only

    def connect(self, dbname: str = "postgres", **kwargs: Any) -> Any:
        """A superuser connection over TCP with the session's password."""
        import psycopg

        return psycopg.connect(host=HOST, port=self.port, user=SUPERUSER, password=self.password,
                               dbname=dbname, connect_timeout=2, autocommit=True, **kwargs)

    def probe(self) -> bool:
        if not self._password_given:
            if not self._answers():
                return False
            self._give_password()
        return super().probe()

    def _answers(self) -> bool:
        """The server accepts connections (a refused password is an answer too)."""
        import psycopg

        try:
            self.connect().close()
        except psycopg.OperationalError as exc:
            return "password authentication failed" in str(exc)
        return True

    def _give_password(self) -> None:
        sql = f"ALTER ROLE {SUPERUSER} PASSWORD '{scram_verifier(self.password)}'"
        code, output = self._container.exec_run(
            ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-U", SUPERUSER, "-p", str(self.port),
             "-d", "postgres", "-c", sql], user="postgres")
        if code != 0:
            raise self.error(f"cannot set the session's password: {output.decode(errors='replace')}")
        self._password_given = True

    def set_password(self, conn: Any) -> None:
        """Already set through the container's socket by the probe."""

    def remove(self) -> None:
        super().remove()
        self._password_given = False  # a new container starts from the image's cluster

    def remove_data(self) -> None:
        self.remove()


class DockerSQS(SQSService, ContainerService):
    """moto's server in a container."""

    image_key = "docker_sqs_image"

    def command(self) -> list[str]:
        return ["moto_server", "-H", HOST, "-p", str(self.port)]


class DockerLocalStack(LocalStackSQS, ContainerService):
    """LocalStack (SQS only) in a container: jobquake/localstack, or the official image where configured."""

    image_key = "docker_localstack_image"

    def container_command(self) -> list[str]:
        if "localstack/localstack" in self.image:  # the official image: its entrypoint starts the runtime
            return []
        return super().container_command()

    def container_env(self) -> dict[str, str]:
        # the container's own folders hold LocalStack's state; only the address and the SQS settings are given
        bind = BRIDGE_BIND if self.network == "bridge" else HOST
        env = {k: v for k, v in LOCALSTACK_ENV.items() if k != "OVERRIDE_IN_DOCKER"}
        env = {**env, "GATEWAY_LISTEN": f"{bind}:{self.port}", "LOCALSTACK_HOST": f"{HOST}:{self.port}",
               **super().container_env()}
        return env_with_path(env, HARNESS_MOUNT)  # the launcher module comes from the mounted harness

    def prepare(self) -> None:
        """Nothing to prepare: LocalStack and its service index are in the image."""

    def after_ready(self) -> None:
        self.create_queues()


class DockerPaidAPI(PaidAPIService, ContainerService):
    """``python -m harness.paidapi`` in a container."""

    image_key = "docker_paidapi_image"

    def container_env(self) -> dict[str, str]:
        return env_with_path(super().container_env(), HARNESS_MOUNT)

    def working_dir(self) -> str | None:
        return HARNESS_MOUNT  # ``python -m`` looks in its cwd first: the image's own copy must not win


class DockerProxy(ProxyService, ContainerService):
    """The embedded proxy in a container, or a real Toxiproxy where its image is configured."""

    image_key = "docker_proxy_image"
    dials_out = True

    def container_command(self) -> list[str]:
        if "toxiproxy" in self.image:  # toxiproxy-server's flags; its image's entrypoint is the server
            return ["-host", HOST, "-port", str(self.port)]
        return super().container_command()

    def container_env(self) -> dict[str, str]:
        return env_with_path(super().container_env(), HARNESS_MOUNT)

    def working_dir(self) -> str | None:
        return None if "toxiproxy" in self.image else HARNESS_MOUNT  # as the paid API's


class DockerApp(AppProcess, ContainerService):
    """One process of the app under test in the app image, from its project folder."""

    image_key = "docker_app_image"
    dials_out = True

    def container_env(self) -> dict[str, str]:
        env = env_with_path(super().container_env(), HARNESS_MOUNT)
        # the instrumentation's sitecustomize, as the container sees the live harness package
        env["PYTHONPATH"] = env["PYTHONPATH"].replace(str(HARNESS_PACKAGE), f"{HARNESS_MOUNT}/harness")
        return env

    def working_dir(self) -> str | None:
        return str(self.cwd)


class DockerWorker(CeleryWorker, DockerApp):
    """One Celery worker container; its pid is the worker's main process, its group the pool's."""


class DockerBackend:
    """Factories of container services, and the owner of every container they make."""

    name = "docker"

    def __init__(self, config: Config):
        self.config = config
        self.engine = Engine(config.docker_host)
        self.made: list[ContainerService] = []

    def _make(self, cls: type[ContainerService], name: str, image: str, **kw: Any) -> Any:
        svc = cls(name, image=image, engine=self.engine, network=self.config.docker_network, **kw)
        self.made.append(svc)
        return svc

    def _app_mounts(self, env: Mapping[str, str]) -> list[Mount]:
        mounts = [harness_mount(), *code_mounts(self.config.root)]
        for shared in (FAILPOINTS_ENV, INSTRUMENT_ENV):  # channels the app's processes write to
            if env.get(shared):
                mounts.append(Mount(env[shared], read_only=False))
        return mounts

    def redis(self, name: str, **kw: Any) -> DockerRedis:
        return self._make(DockerRedis, name, self.config.docker_redis_image, **kw)

    def postgres(self, name: str, **kw: Any) -> DockerPostgres:
        return self._make(DockerPostgres, name, self.config.docker_postgres_image, **kw)

    def sqs(self, name: str, **kw: Any) -> DockerSQS | DockerLocalStack:
        return self.sqs_server(self.config.sqs, name, **kw)

    def sqs_server(self, server: str, name: str, **kw: Any) -> DockerSQS | DockerLocalStack:
        """SQS from ``server`` ("moto" or "localstack"), whatever config ``sqs`` says."""
        if server == "localstack":
            image = self.config.docker_localstack_image
            mounts = [] if "localstack/localstack" in image else [harness_mount()]
            return self._make(DockerLocalStack, name, image, mounts=mounts, **kw)
        return self._make(DockerSQS, name, self.config.docker_sqs_image, **kw)

    def paidapi(self, name: str, **kw: Any) -> DockerPaidAPI:
        return self._make(DockerPaidAPI, name, self.config.docker_paidapi_image, mounts=[harness_mount()], **kw)

    def proxy(self, name: str, **kw: Any) -> DockerProxy:
        mounts = [] if "toxiproxy" in self.config.docker_proxy_image else [harness_mount()]
        return self._make(DockerProxy, name, self.config.docker_proxy_image, mounts=mounts, **kw)

    def app_process(self, name: str, **kw: Any) -> DockerApp:
        return self._make(DockerApp, name, self.config.docker_app_image,
                          mounts=self._app_mounts(kw.get("env", {})), **kw)

    def worker(self, name: str, **kw: Any) -> DockerWorker:
        return self._make(DockerWorker, name, self.config.docker_app_image,
                          mounts=self._app_mounts(kw.get("env", {})), **kw)

    def reap(self) -> list[str]:
        """Remove the containers that killed runs on this machine left behind."""
        return self.engine.reap()

    def close(self) -> None:
        """Remove every container this backend made (stopped ones kept for their data included)."""
        made, self.made = self.made, []
        for svc in made:
            svc.remove()
