"""The proxies: one asyncio listener each, their live links and their toxics.

Semantics follow Toxiproxy: disabling a proxy stops the listener and drops
every connection; changing ``listen`` or ``upstream`` restarts it; toxics
added, updated or removed apply to connections already open. Unlike
Toxiproxy, every random draw comes from one generator seeded by the caller,
so the same seed and the same sequence of connections give the same run, and
a disabled proxy keeps its port (bound, not listening: ``holding.py``) until
it is deleted or moved, so nobody else can take it meanwhile. An upstream may
be a Unix socket (``unix:/path``), as the harness's own servers are reached.
"""
from __future__ import annotations

import asyncio
import logging
import random
import socket
from collections.abc import Callable
from typing import Any

from harness.proxy import fields
from harness.proxy.fields import ApiError, ProxyFields
from harness.proxy.holding import BACKLOG, bind_held, relisten, unlisten
from harness.proxy.link import Link
from harness.proxy.toxics import STREAMS, TRAFFIC, Toxic, apply_update, parse_toxic

log = logging.getLogger("harness.proxy")


class TcpProxy:
    """One named proxy: listens on loopback, forwards each connection to ``upstream``."""

    def __init__(self, spec: ProxyFields, next_seed: Callable[[], int]):
        self.name = spec.name
        self.listen = spec.listen
        self.upstream = spec.upstream
        self.enabled = False
        self.max_connections = spec.max_connections  # more open links than this are reset at once
        self.toxics: list[Toxic] = []
        self._server: asyncio.Server | None = None
        self._held: socket.socket | None = None  # the bound socket, kept while disabled
        self._links: dict[Link, None] = {}  # an ordered set: connection order
        self._next_seed = next_seed
        self.traffic = dict.fromkeys(STREAMS, 0)  # bytes read from either side, since creation

    def to_json(self) -> dict[str, Any]:
        ordered = [t for stream in STREAMS for t in self.toxics if t.stream == stream]
        return {
            "name": self.name,
            "listen": self.listen,
            "upstream": self.upstream,
            "enabled": self.enabled,
            "toxics": [toxic.to_json() for toxic in ordered],
            TRAFFIC: dict(self.traffic),
            **({fields.MAX_CONNECTIONS: self.max_connections} if self.max_connections else {}),
        }

    async def start(self) -> None:
        """Listen; a bind failure is a 500 as in Toxiproxy, and leaves the proxy disabled."""
        if self.enabled:
            return
        try:
            if self._held is None:
                self._held = bind_held(*fields.loopback_listen(self.listen))
            relisten(self._held)
            # the server gets a duplicate to close when it stops; ours keeps the port
            self._server = await asyncio.start_server(self._on_client, sock=self._held.dup(), backlog=BACKLOG)
        except OSError as exc:
            raise ApiError(500, f"listen tcp {self.listen}: {exc.strerror or exc}") from exc
        bound = self._held.getsockname()
        self.listen = fields.join_address(bound[0], bound[1])
        self.enabled = True
        log.info("proxy %s listening on %s -> %s", self.name, self.listen, self.upstream)

    async def stop(self, release: bool = False) -> None:
        """Stop listening and drop every connection; keep the port unless ``release``."""
        if self.enabled and self._server is not None:
            self.enabled = False
            server, self._server = self._server, None
            server.close()
            for link in list(self._links):
                link.abort()
            await server.wait_closed()
            log.info("proxy %s stopped listening on %s", self.name, self.listen)
        if self._held is None:
            return
        if release:
            self._held.close()
            self._held = None
            return
        try:
            unlisten(self._held)
        except OSError as exc:  # never listen on: give the port back rather than keep accepting
            log.warning("proxy %s: %s; releasing %s", self.name, exc, self.listen)
            self._held.close()
            self._held = None

    def add_toxic(self, body: Any) -> Toxic:
        toxic = parse_toxic(body)
        if any(t.name == toxic.name for t in self.toxics):
            raise fields.toxic_exists()
        self.toxics.append(toxic)
        for link in list(self._links):
            link.add_toxic(toxic)
        return toxic

    def get_toxic(self, name: str) -> Toxic:
        for toxic in self.toxics:
            if toxic.name == name:
                return toxic
        raise fields.toxic_not_found()

    def update_toxic(self, name: str, body: Any) -> Toxic:
        toxic = self.get_toxic(name)
        toxicity = toxic.toxicity
        apply_update(toxic, body)
        for link in list(self._links):
            link.update_toxic(toxic, toxicity_changed=toxic.toxicity != toxicity)
        return toxic

    def remove_toxic(self, name: str) -> None:
        toxic = self.get_toxic(name)
        self.toxics.remove(toxic)
        for link in list(self._links):
            link.remove_toxic(toxic)

    def remove_all_toxics(self) -> None:
        for toxic in list(self.toxics):
            self.remove_toxic(toxic.name)

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.enabled:  # accepted just before the proxy was disabled
            writer.transport.abort()
            return
        if self.max_connections is not None and len(self._links) >= self.max_connections:
            # a bounded route: what it forwards to keeps slots for those who reach it directly
            log.warning("proxy %s: %d connections open already, one more reset", self.name, len(self._links))
            writer.transport.abort()
            return
        # Created before the first await: seeds are drawn in accept order.
        link = Link(reader, writer, self.toxics, self._next_seed(), self.traffic)
        self._links[link] = None
        client = fields.join_address(*writer.get_extra_info("peername")[:2])
        log.info("proxy %s: connection from %s opened", self.name, client)
        try:
            await link.run(self.upstream)
        except OSError as exc:
            log.warning("proxy %s: upstream %s unreachable (%s)", self.name, self.upstream, exc)
        finally:
            del self._links[link]
            log.info("proxy %s: connection from %s closed", self.name, client)


class ProxyCollection:
    """Every proxy of one server, by name; the API's model."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._rng = random.Random(seed)
        self._proxies: dict[str, TcpProxy] = {}

    def all(self) -> dict[str, TcpProxy]:
        return dict(self._proxies)

    def get(self, name: str) -> TcpProxy:
        proxy = self._proxies.get(name)
        if proxy is None:
            raise fields.proxy_not_found()
        return proxy

    async def create(self, body: Any) -> TcpProxy:
        spec = fields.parse_proxy(body)
        if spec.name in self._proxies:
            raise fields.proxy_exists()
        return await self._add(spec)

    async def update(self, name: str, body: Any) -> TcpProxy:
        """Change listen/upstream (restarts the proxy) and/or enabled; absent fields stay."""
        proxy = self.get(name)
        if not isinstance(body, dict):
            raise ApiError(400, "bad request body: expected a JSON object")
        listen = fields.check_listen(body.get("listen", proxy.listen))
        upstream = fields.check_upstream(body.get("upstream", proxy.upstream))
        enabled = fields.check_enabled(body.get("enabled", proxy.enabled))
        if listen != proxy.listen or upstream != proxy.upstream:
            await proxy.stop(release=listen != proxy.listen)
            proxy.listen, proxy.upstream = listen, upstream
        if enabled:
            await proxy.start()
        else:
            await proxy.stop()
        return proxy

    async def remove(self, name: str) -> None:
        proxy = self.get(name)
        del self._proxies[name]
        await proxy.stop(release=True)

    async def populate(self, body: Any) -> tuple[list[TcpProxy], ApiError | None]:
        """Create or replace proxies; an existing one with the same listen and upstream stays.

        Every entry is validated before anything changes. Returns the proxies
        applied and, when applying one failed, the error (Toxiproxy's
        populate answers with both).
        """
        if not isinstance(body, list):
            raise ApiError(400, "bad request body: expected a JSON array of proxies")
        specs = [fields.parse_proxy(item, f" at proxy {i}") for i, item in enumerate(body, 1)]
        names = [spec.name for spec in specs]
        for name in names:
            if names.count(name) > 1:
                raise ApiError(400, f"bad request body: duplicate proxy name {name!r}")
        applied: list[TcpProxy] = []
        for spec in specs:
            try:
                applied.append(await self._add_or_replace(spec))
            except ApiError as exc:
                return applied, exc
        return applied, None

    async def reset(self) -> None:
        """Enable every proxy and remove every toxic (Toxiproxy's POST /reset)."""
        for proxy in list(self._proxies.values()):
            await proxy.start()
            proxy.remove_all_toxics()

    async def close(self) -> None:
        """Stop every proxy (server shutdown)."""
        for proxy in list(self._proxies.values()):
            await proxy.stop(release=True)

    async def _add_or_replace(self, spec: ProxyFields) -> TcpProxy:
        existing = self._proxies.get(spec.name)
        if existing is not None:
            same_listen = fields.loopback_listen(existing.listen) == fields.loopback_listen(spec.listen)
            if same_listen and existing.upstream == spec.upstream:
                existing.max_connections = spec.max_connections
                return existing
            del self._proxies[spec.name]
            await existing.stop(release=True)
        return await self._add(spec)

    async def _add(self, spec: ProxyFields) -> TcpProxy:
        proxy = TcpProxy(spec, self._next_seed)
        if spec.enabled:
            await proxy.start()
        if spec.name in self._proxies:  # created meanwhile by a concurrent request
            await proxy.stop(release=True)
            raise fields.proxy_exists()
        self._proxies[spec.name] = proxy
        return proxy

    def _next_seed(self) -> int:
        return self._rng.getrandbits(64)
