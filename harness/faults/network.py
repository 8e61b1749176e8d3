"""Faults between the app and a service: hung endpoints, network toxics, a proxy that is down.

Two ways an endpoint "accepts and never answers", which fail differently:

- ``HangEndpoint(layer="provider")``: the paid API's hang mode. The provider
  reads the request and never answers; it does no work and bills nothing
  (the ledger shows the call ``hung``). A retry after the client's timeout
  costs nothing twice. Can target one job or route. Heal answers the hung
  calls 503; ``count`` hangs only the next N calls. With ``mid_stream=True`` (the ``hang_mid_stream`` mode) the
  provider generates, sends half its answer (half the events of a stream)
  and then nothing; nothing is billed; heal cuts the connection.
- ``HangEndpoint(layer="network")``: the proxy's ``timeout`` toxic with
  timeout 0 on the paid API's proxy. On the ``downstream`` stream (the
  default) the request gets through, the provider generates and bills, and
  the answer is dropped on the way back: the client cannot tell a call that
  was never made from one that was billed, and a retry without an
  idempotency key is billed twice. On ``upstream`` the request itself is
  dropped and the provider never sees it. It cannot tell jobs apart (it
  sees bytes). Heal removes the toxic, which closes the starved connections.

``NetworkToxic`` adds any Toxiproxy toxic to a proxy; at heal it records how
many bytes went through the toxic while it was set (``toxic_bytes``, from the
embedded proxy's ``jobquake_bytes`` extension; None against a real Toxiproxy); ``ProxyDown`` disables
a proxy (it stops listening and drops every connection: "connection refused").
"""
from __future__ import annotations

import socket
from typing import Any

from harness._wait import wait_until
from harness.faults import _params as p
from harness.faults._app_logs import AppLogWatch
from harness.faults.base import Fault
from harness.proxy.client import ProxyAPIError
from harness.proxy.toxics import ATTRIBUTES, STREAMS

__all__ = ["DEFAULT_PROXY", "HangEndpoint", "LAYERS", "NetworkToxic", "ProxyDown", "REFUSALS"]

LAYERS = ("provider", "network")
# what an app's HTTP client logs when the proxy in front of its provider is gone
REFUSALS = r"connection refused|connecterror|provider unreachable|connection reset"
DEFAULT_PROXY = "paidapi"


class HangEndpoint(Fault):
    """The paid API behind ``proxy`` accepts and never answers, at the provider or on the network."""

    name = "hang_endpoint"

    def __init__(self, proxy: str = DEFAULT_PROXY, layer: str = "provider", job_id: str | None = None,
                 route: str | None = None, stream: str = "downstream", mid_stream: bool = False,
                 count: int | None = None):
        super().__init__()
        if count is not None and layer != "provider":
            raise self.error("count (hang only the next N calls) is a provider rule: use layer='provider'")
        self.count = None if count is None else p.non_negative_int(count, "count", self.name)
        if layer not in LAYERS:
            raise self.error(f"layer must be one of {LAYERS}, got {layer!r}")
        if stream not in STREAMS:
            raise self.error(f"stream must be one of {STREAMS}, got {stream!r}")
        if layer == "network" and (job_id is not None or route is not None):
            raise self.error("the network layer sees bytes, not jobs or routes: "
                             "use layer='provider' to hang one job or route")
        if mid_stream not in (True, False):
            raise self.error(f"mid_stream must be True or False, got {mid_stream!r}")
        if layer == "network" and mid_stream:
            raise self.error("mid_stream is a provider mode: use layer='provider'")
        self.mid_stream = mid_stream
        self.layer = layer
        self.job_id = p.text(job_id, "job_id", self.name, optional=True)
        self.route = p.text(route, "route", self.name, optional=True)
        self.proxy = p.text(proxy, "proxy", self.name)
        self.stream = stream
        self._undo: Any = None

    def params(self) -> dict[str, Any]:
        if self.layer == "provider":
            return {"layer": self.layer, "job_id": self.job_id, "route": self.route,
                    "mid_stream": self.mid_stream, **({} if self.count is None else {"count": self.count})}
        return {"layer": self.layer, "proxy": self.proxy, "stream": self.stream}

    def _inject(self) -> dict[str, Any]:
        if self.layer == "provider":
            mode = "hang_mid_stream" if self.mid_stream else "hang"
            rule = self.run.paidapi.set_mode(mode, job_id=self.job_id, route=self.route, count=self.count)
            self._undo = rule.heal
            return {"rule_id": rule.rule_id}
        toxic = NetworkToxic(self.proxy, "timeout", stream=self.stream, name=f"{self.name}_{self.stream}",
                             timeout=0)
        toxic.bind(self.run)._inject()
        self._undo = toxic._heal
        return {"toxic": toxic.toxic_name}

    def _heal(self) -> dict[str, Any]:
        undo, self._undo = self._undo, None
        seen = undo() if undo is not None else None
        return seen if isinstance(seen, dict) else {}  # the network layer: the toxic's byte count


class NetworkToxic(Fault):
    """A Toxiproxy toxic on ``proxy`` (latency, bandwidth, reset_peer, slicer, limit_data, ...)."""

    name = "network_toxic"

    def __init__(self, proxy: str, type: str, stream: str = "downstream", toxicity: float = 1.0,
                 name: str | None = None, **attributes: int):
        super().__init__()
        self.proxy = p.text(proxy, "proxy", self.name)
        if type not in ATTRIBUTES:
            raise self.error(f"unknown toxic type {type!r}; known: {', '.join(ATTRIBUTES)}")
        if stream not in STREAMS:
            raise self.error(f"stream must be one of {STREAMS}, got {stream!r}")
        if isinstance(toxicity, bool) or not isinstance(toxicity, (int, float)) or not 0 <= toxicity <= 1:
            raise self.error(f"toxicity must be a number between 0 and 1, got {toxicity!r}")
        unknown = sorted(set(attributes) - set(ATTRIBUTES[type]))
        if unknown:
            raise self.error(f"a {type} toxic has no attribute {', '.join(unknown)}; "
                             f"it has: {', '.join(ATTRIBUTES[type])}")
        for key, value in attributes.items():
            p.non_negative_int(value, key, self.name)
        self.type = type
        self.stream = stream
        self.toxicity = float(toxicity)
        self.toxic_name = p.text(name, "name", self.name, optional=True) or f"{type}_{stream}"
        self.attributes = dict(attributes)

    def params(self) -> dict[str, Any]:
        return {"proxy": self.proxy, "type": self.type, "stream": self.stream, "toxicity": self.toxicity,
                "name": self.toxic_name, **self.attributes}

    def _inject(self) -> dict[str, Any]:
        proxy = _proxy(self)
        proxy.add_toxic(self.type, name=self.toxic_name, stream=self.stream, toxicity=self.toxicity,
                        attributes=self.attributes)
        return {"toxic": self.toxic_name, "listen": proxy.listen}

    def _heal(self) -> dict[str, Any]:
        """Remove the toxic; ``toxic_bytes``: what went through it (None: the proxy cannot say)."""
        try:
            proxy = self.run.proxy.get_proxy(self.proxy)
            seen = proxy.get_toxic(self.toxic_name).bytes_seen  # read before it goes
            proxy.remove_toxic(self.toxic_name)
        except ProxyAPIError as exc:
            if exc.status != 404:  # already gone (a reset, a removed proxy): healed
                raise
            return {"toxic_bytes": None, "toxic_gone": True}
        return {"toxic_bytes": seen}


class ProxyDown(Fault):
    """Disable ``proxy``: it stops listening and drops its connections; heal enables it."""

    name = "proxy_down"

    def __init__(self, proxy: str = DEFAULT_PROXY):
        super().__init__()
        self.proxy = p.text(proxy, "proxy", self.name)

    def params(self) -> dict[str, Any]:
        return {"proxy": self.proxy}

    def _inject(self) -> dict[str, Any]:
        proxy = _proxy(self)
        if not proxy.enabled:
            raise self.error(f"proxy {self.proxy!r} is already down")
        self._watch = AppLogWatch(self.run)
        proxy.disable()
        host, _, port = proxy.listen.rpartition(":")
        wait_until(lambda: not _accepts(host, int(port)), timeout=5, what=f"proxy {self.proxy} to refuse")
        return {"listen": proxy.listen}

    def _heal(self) -> dict[str, Any]:
        felt = self._watch.evidence(REFUSALS) if getattr(self, "_watch", None) else {}
        self.run.proxy.get_proxy(self.proxy).enable()
        return felt


def _proxy(fault: Fault) -> Any:
    name = fault.proxy  # type: ignore[attr-defined]
    try:
        return fault.run.proxy.get_proxy(name)
    except ProxyAPIError as exc:
        if exc.status == 404:
            known = ", ".join(fault.run.proxy.proxies()) or "none"
            raise fault.error(f"no proxy {name!r} (known: {known}); is it in the config's 'proxied'?") from exc
        raise


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
