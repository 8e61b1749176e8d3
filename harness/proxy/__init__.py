"""The embedded TCP fault proxy, speaking Toxiproxy's HTTP API, and a client for it.

Names load on first use: ``python -m harness.proxy`` must not import the
HTTP client, and the client must not import the server.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "ProxyServer": "harness.proxy.runner",
    "ProxyClient": "harness.proxy.client",
    "Proxy": "harness.proxy.client",
    "Toxic": "harness.proxy.client",
    "ProxyAPIError": "harness.proxy.client",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.proxy' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
