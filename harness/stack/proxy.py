"""The fault proxy as a local process: the embedded proxy speaking Toxiproxy's HTTP API."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from harness.stack.probe_http import probe_client
from harness.stack.process import ProcessService

if TYPE_CHECKING:
    from harness.proxy.client import ProxyClient


class ProxyService(ProcessService):
    """``python -m harness.proxy``; drive it with ``harness.proxy.ProxyClient``."""

    scheme = "http"
    start_timeout = 15.0

    def __init__(self, *args: Any, seed: int, routes: dict[str, tuple[int, str]] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.seed = seed
        self.routes = dict(routes or {})  # proxy name -> (listen port, upstream host:port)

    def command(self) -> list[str]:
        return [sys.executable, "-m", "harness.proxy", "--host", self.host, "--port", str(self.port),
                "--seed", str(self.seed)]

    def probe(self) -> bool:
        return probe_client().get(f"{self.url}/version").is_success

    def after_ready(self) -> None:
        """Create the configured routes (again, after a restart: the proxy keeps no state)."""
        client = self.client()
        for name, (port, upstream) in self.routes.items():
            client.create(name=name, listen=f"{self.host}:{port}", upstream=upstream)

    def client(self) -> ProxyClient:
        """A client of this service, made once and reused (each holds a connection pool)."""
        if getattr(self, "_client", None) is None:
            from harness.proxy.client import ProxyClient

            self._client = ProxyClient(self.url)
        return self._client
