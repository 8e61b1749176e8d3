"""The embedded TCP fault proxy, speaking Toxiproxy's HTTP API, and a client for it.

Names load on first use: ``python -m harness.proxy`` must not import the
HTTP client, and the client must not import the server.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness._lazy import lazy_exports

if TYPE_CHECKING:
    from harness.proxy.client import Proxy, ProxyAPIError, ProxyClient, Toxic
    from harness.proxy.runner import ProxyServer

_EXPORTS: dict[str, str] = {
    "ProxyServer": "harness.proxy.runner",
    "ProxyClient": "harness.proxy.client",
    "Proxy": "harness.proxy.client",
    "Toxic": "harness.proxy.client",
    "ProxyAPIError": "harness.proxy.client",
}

__all__ = ["Proxy", "ProxyAPIError", "ProxyClient", "ProxyServer", "Toxic"]

if not TYPE_CHECKING:  # to a type checker an unknown name must stay an error, not Any
    __getattr__ = lazy_exports(__name__, _EXPORTS)
