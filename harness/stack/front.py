"""The TCP address the app reaches a socket-only server by: a route of the fault proxy, held through outages.

Redis and Postgres listen only on Unix sockets in the run's private folder.
Where the app needs a TCP address (``{redis_url}``: kombu, Celery and
redis-py accept no one URL for a socket; and a server the app reaches through
the fault proxy), a route of the proxy listens on it and forwards to the
socket. The proxy is not stopped by a fault, so the port stays the harness's
for the whole session; when the server behind it stops, its front stops
listening but keeps the port bound (``harness.proxy.holding``), so the app's
clients are refused as they were by a stopped server, and nobody else can
bind the port and collect the password they send on reconnecting. When the
server is ready again, its front listens again.
"""
from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping

log = logging.getLogger("harness.stack")

ALWAYS_FRONTED = ("redis",)  # the app's {redis_url} is TCP whatever the config proxies


class Front:
    """The fault proxy's route ``route`` in front of one service."""

    def __init__(self, proxy: Any, route: str):
        self.proxy = proxy
        self.route = route

    def hold(self) -> None:
        """Stop listening, keep the port (the service behind is going away)."""
        self._set(False)

    def open(self) -> None:
        """Listen again (the service behind is ready)."""
        self._set(True)

    def _set(self, enabled: bool) -> None:
        from harness.proxy.client import ProxyAPIError

        if not self.proxy.is_running():
            return  # starting or stopping with the stack: its routes are made enabled, or go with it
        try:
            self.proxy.client().get_proxy(self.route).update(enabled=enabled)
        except ProxyAPIError as exc:
            # the port stays the proxy's either way: only the refusal the app sees is lost
            log.info("front %s: cannot %s it: %s", self.route, "open" if enabled else "hold", exc)


def routed(proxied: Iterable[str], services: Mapping[str, Any]) -> list[str]:
    """The services the proxy has a route to: those the config proxies, and every socket-only
    service the app needs a TCP address for."""
    fronted = [name for name in ALWAYS_FRONTED if getattr(services[name], "socket_path", None)]
    return list(dict.fromkeys([*proxied, *fronted]))


def attach_fronts(proxy: Any, services: Mapping[str, Any], routes: Iterable[str]) -> None:
    """Give each socket-only service with a route its front, which it holds while it is down, and
    bound the route's connections where the service keeps slots for direct clients (Postgres)."""
    for name in routes:
        service = services[name]
        if service.proxy_upstream.startswith("unix:"):
            service.front = Front(proxy, name)
            if getattr(service, "front_limit", None):
                proxy.limits[name] = service.front_limit
