"""SQS served by LocalStack: ``localstack-core``'s runtime run directly, SQS only, on loopback.

The runtime is started as ``python -m localstack.runtime.main`` is (no CLI,
no account, no container of its own; see ``localstack_main`` for the one
thing added), with every folder it writes under the
service's work folder in the run folder. LocalStack has no moto-style reset
call, so a reset deletes every queue and recreates the configured ones
(dead-letter queues first, then the queues whose redrive policy names them),
which is what an app that creates its own queues sees after moto's reset too.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.errors import ServiceError
from harness.stack.postgres import cache_dir
from harness.stack.probe_http import probe_client
from harness.stack.sqs import SQSService
from harness.stack.sqs_clients import PROBE, sqs_client

EXTRA = "jobquake[localstack]"
# settings of LocalStack's runtime (its config.py reads them from the environment)
RUNTIME_ENV = {
    "SERVICES": "sqs",
    "EAGER_SERVICE_LOADING": "1",  # SQS loaded at start: "ready" means SQS answers
    "GATEWAY_SERVER": "hypercorn",  # its default (twisted) needs service_identity, which the package lacks
    "OVERRIDE_IN_DOCKER": "0",  # a machine that is itself a container must not make it use /var/lib/localstack
    "SKIP_SSL_CERT_DOWNLOAD": "1",  # loopback only: a self-signed certificate, no download attempt
    "DISABLE_EVENTS": "1",  # no usage events sent anywhere
    "DNS_ADDRESS": "0",  # no DNS server of its own
    "SQS_ENDPOINT_STRATEGY": "path",  # queue URLs name the gateway's address: http://127.0.0.1:PORT/queue/...
}
# LocalStack indexes every AWS service spec once (~20 s on a busy machine) into a file named after its
# and botocore's versions; kept in jobquake's cache, a run copies it in and starts in a few seconds
CATALOG_GLOB = "service-catalog-*.dill"


def localstack_installed() -> bool:
    """True where ``localstack-core``'s runtime can be imported by this interpreter."""
    try:
        return importlib.util.find_spec("localstack.runtime.main") is not None
    except ModuleNotFoundError:
        return False


class LocalStackSQS(SQSService):
    """LocalStack's runtime as a local process, serving SQS; ``reset()`` recreates the configured queues."""

    sqs_service = "localstack"
    start_timeout = 60.0
    port_handover = False  # its gateway binds GATEWAY_LISTEN itself

    def command(self) -> list[str]:
        return [sys.executable, "-m", "harness.stack.localstack_main"]  # localstack.runtime.main, heap frozen

    @property
    def filesystem_root(self) -> Path:
        """Where LocalStack keeps every folder it writes (state, cache, certificate): the run folder."""
        return self.workdir / "localstack"

    def runtime_env(self) -> dict[str, str]:
        """LocalStack's settings: SQS only, on this service's address, its folders under the work folder."""
        address = f"{self.host}:{self.port}"
        return {**RUNTIME_ENV, "GATEWAY_LISTEN": address, "LOCALSTACK_HOST": address,
                "FILESYSTEM_ROOT": str(self.filesystem_root)}

    def prepare(self) -> None:
        if not localstack_installed():
            raise self.error(f"sqs = 'localstack' needs LocalStack's runtime, which is not installed: "
                             f"pip install '{EXTRA}' (or set sqs = 'moto')")
        self.extra_env = {**self.runtime_env(), **self.extra_env}  # explicit env (a test's) wins
        _build_catalog_once(self.workdir / "catalog-build")
        _copy_new(_shared_catalog_dir(), self._catalog_dir())

    def after_ready(self) -> None:
        _copy_new(self._catalog_dir(), _shared_catalog_dir())  # the index the first run built, for the next ones
        super().after_ready()

    def _catalog_dir(self) -> Path:
        return self.filesystem_root / "var" / "lib" / "localstack" / "cache"

    def probe(self) -> bool:
        """Ready when LocalStack reports SQS running and an SQS call answers (its gateway answers first)."""
        health = probe_client().get(f"{self.url}/_localstack/health").json()
        if health.get("services", {}).get("sqs") != "running":
            return False
        sqs_client(self.url, self.sqs_service, PROBE).list_queues()
        return True

    def reset(self) -> None:
        """Delete every queue (the app's own ones too, as moto's reset does), then recreate the configured ones."""
        sqs = self.client()
        urls = _all_queue_urls(sqs)

        def delete(url: str) -> None:
            try:
                sqs.delete_queue(QueueUrl=url)
            except sqs.exceptions.QueueDoesNotExist:
                pass  # deleted meanwhile (an app's own clean-up)

        # each call costs LocalStack ~10 ms of its own: the deletions go side by side
        with ThreadPoolExecutor(max_workers=max(1, min(8, len(urls)))) as pool:
            list(pool.map(delete, urls))
        self.create_queues()

    def error(self, message: str, cls: type[ServiceError] = ServiceError) -> ServiceError:
        return super().error(f"LocalStack (SQS): {message}", cls)


def _shared_catalog_dir() -> Path:
    return cache_dir() / "localstack"  # beside the Postgres template cluster; JOBQUAKE_CACHE_DIR moves both


def _build_catalog_once(workdir: Path) -> None:
    """Build LocalStack's service index into the shared cache if it holds none: before the process
    starts, so the first run on a machine does not spend its start timeout on it."""
    if any(_shared_catalog_dir().glob(CATALOG_GLOB)):
        return  # after an upgrade the runtime builds its new one itself, and after_ready keeps it
    static_libs = workdir / "usr" / "lib" / "localstack"  # where `localstack.aws.spec` writes it
    static_libs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **RUNTIME_ENV, "FILESYSTEM_ROOT": str(workdir)}
    subprocess.run([sys.executable, "-m", "localstack.aws.spec"], env=env, cwd=workdir,
                   stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, timeout=300, check=False)
    _copy_new(static_libs, _shared_catalog_dir())
    shutil.rmtree(workdir, ignore_errors=True)


def _copy_new(source: Path, target: Path) -> None:
    """Copy the service-catalog files of ``source`` that ``target`` lacks (atomically: a reader never
    sees half a file, and two runs copying at once both end with a whole one)."""
    target.mkdir(parents=True, exist_ok=True)
    for found in source.glob(CATALOG_GLOB) if source.is_dir() else []:
        if not (target / found.name).exists():
            staging = target / f".{found.name}.{os.getpid()}"
            shutil.copyfile(found, staging)
            os.replace(staging, target / found.name)


def _all_queue_urls(sqs: Any) -> list[str]:
    urls: list[str] = []
    for page in sqs.get_paginator("list_queues").paginate(PaginationConfig={"PageSize": 1000}):
        urls.extend(page.get("QueueUrls", []))
    return urls
