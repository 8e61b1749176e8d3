"""One HTTP client for the stack's health probes and resets, made once per process.

``httpx.get`` builds a new client per call, and with it a TLS context that
loads the system's CA bundle: milliseconds of CPU, every call. A readiness
wait probes many times a second while a process starts, so those contexts
were about a fifth of the harness's own CPU in a run of the scenarios. The
probes speak plain HTTP to loopback: one client serves them all (httpx
clients are thread-safe). It keeps no connection alive between calls, so a
probe never reuses a connection to a process that was killed meanwhile.
"""
from __future__ import annotations

import threading

import httpx

_lock = threading.Lock()
_client: httpx.Client | None = None


def probe_client() -> httpx.Client:
    """The process's shared probe client (1 s timeout unless a call passes its own)."""
    global _client
    with _lock:
        if _client is None:
            _client = httpx.Client(timeout=1.0, limits=httpx.Limits(max_keepalive_connections=0))
        return _client
