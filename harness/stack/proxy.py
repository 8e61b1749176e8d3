"""The fault proxy as a local process: the embedded proxy speaking Toxiproxy's HTTP API.

Its API answers only requests that carry the session's token (a header a
real Toxiproxy ignores), which the harness writes to a file in the private
run folder and its own client sends. The proxy listens only where the
harness asks: its routes, made at start and made again by every reset.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from harness.proxy.fields import MAX_CONNECTIONS
from harness.stack.credentials import control_token, write_secret
from harness.stack.probe_http import probe_client
from harness.stack.process import ProcessService

if TYPE_CHECKING:
    from harness.proxy.client import ProxyClient


class ProxyService(ProcessService):
    """``python -m harness.proxy``; drive it with ``harness.proxy.ProxyClient``."""

    scheme = "http"
    start_timeout = 15.0
    port_handover = True

    def __init__(self, *args: Any, seed: int, routes: dict[str, tuple[int, str]] | None = None,
                 limits: dict[str, int] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.seed = seed
        self.routes = dict(routes or {})  # proxy name -> (listen port, upstream host:port or unix:/path)
        self.limits = dict(limits or {})  # proxy name -> connections it keeps open at most
        self.token = control_token()
        self.token_path = self.workdir / "control.token"

    secret_mode = 0o600

    def prepare(self) -> None:
        write_secret(self.token_path, self.token, self.secret_mode)

    def command(self) -> list[str]:
        where = ["--fd", self.listen_fd()] if self.port_handover else ["--host", self.host, "--port", str(self.port)]
        return [sys.executable, "-m", "harness.proxy", *where, "--seed", str(self.seed),
                "--token-file", self.token_file()]

    def token_file(self) -> str:
        """Where the server reads the token (a container sees it at its mount)."""
        return str(self.token_path)

    def probe(self) -> bool:
        return probe_client().get(f"{self.url}/version").is_success

    def route_specs(self) -> list[dict[str, Any]]:
        """The session's routes as Toxiproxy's populate takes them: what the proxy must hold."""
        return [{"name": name, "listen": f"{self.host}:{port}", "upstream": upstream, "enabled": True,
                 **({MAX_CONNECTIONS: self.limits[name]} if name in self.limits else {})}
                for name, (port, upstream) in self.routes.items()]

    def after_ready(self) -> None:
        """Create the configured routes (again, after a restart: the proxy keeps no state)."""
        self.client().populate(self.route_specs())

    def reset(self) -> None:
        """The session's known state: exactly its routes, where they belong, enabled, without toxics
        (Toxiproxy's reset alone leaves a deleted route deleted and a foreign one in place)."""
        client = self.client()
        mine = set(self.routes)
        for name in set(client.listed()) - mine:
            client.get_proxy(name).destroy()
        client.populate(self.route_specs())
        client.reset()

    def client(self) -> ProxyClient:
        """A client of this service, made once and reused (each holds a connection pool)."""
        if getattr(self, "_client", None) is None:
            from harness.proxy.client import ProxyClient

            self._client = ProxyClient(self.url, token=self.token)
        return self._client
