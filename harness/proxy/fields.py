"""Proxy fields as the API takes them: validation, defaults, loopback-only listen addresses.

Also the error type the API turns into Toxiproxy's error body
(``{"error": message, "status": code}``).
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from harness.proxy.toxics import BAD_BODY

DEFAULT_LISTEN = "127.0.0.1:0"  # port 0: the system picks a free port
UNIX_PREFIX = "unix:"
LISTEN_HOSTS = ("127.0.0.1", "::1")
FIRST_UNPRIVILEGED_PORT = 1024


class ApiError(Exception):
    """A request the API answers with ``status`` and Toxiproxy's error body."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def proxy_not_found() -> ApiError:
    return ApiError(404, "proxy not found")


def proxy_exists() -> ApiError:
    return ApiError(409, "proxy already exists")


def toxic_not_found() -> ApiError:
    return ApiError(404, "toxic not found")


def toxic_exists() -> ApiError:
    return ApiError(409, "toxic already exists")


@dataclass
class ProxyFields:
    """A validated proxy definition."""

    name: str
    upstream: str
    listen: str = DEFAULT_LISTEN
    enabled: bool = True
    max_connections: int | None = None  # the embedded proxy's extension: open links at most


MAX_CONNECTIONS = "jobquake_max_connections"


def parse_proxy(body: Any, where: str = "") -> ProxyFields:
    """Validate a create/populate entry; ``where`` (" at proxy 2") locates it in a list."""
    if not isinstance(body, dict):
        raise ApiError(400, f"{BAD_BODY}: expected a JSON object{where}")
    for field in ("name", "upstream"):
        value = body.get(field)
        if value is None or value == "":
            raise ApiError(400, f"missing required field: {field}{where}")
        if not isinstance(value, str):
            raise ApiError(400, f"{BAD_BODY}: {field} must be a string{where}")
    fields = ProxyFields(body["name"], body["upstream"])
    fields.listen = check_listen(body.get("listen") or DEFAULT_LISTEN)
    check_upstream(fields.upstream)
    fields.enabled = check_enabled(body.get("enabled", True))
    fields.max_connections = check_max_connections(body.get(MAX_CONNECTIONS))
    return fields


def check_max_connections(value: Any) -> int | None:
    """How many connections the proxy keeps open at once (None: no bound); more are reset at once."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ApiError(400, f"{BAD_BODY}: {MAX_CONNECTIONS} must be a whole number >= 1, got {value!r}")
    return value


def check_enabled(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ApiError(400, f"{BAD_BODY}: enabled must be true or false, got {value!r}")
    return value


def check_upstream(address: Any) -> str:
    """``host:port``, or (an extension of the embedded proxy) ``unix:/absolute/path``."""
    if not isinstance(address, str):
        raise ApiError(400, f"{BAD_BODY}: upstream must be a string")
    if unix_path(address) is None:
        split_address(address, "upstream")
    return address


def unix_path(upstream: str) -> str | None:
    """The socket path of a ``unix:/path`` upstream (None for host:port); 400 for a relative path."""
    if not upstream.startswith(UNIX_PREFIX):
        return None
    path = upstream[len(UNIX_PREFIX):]
    if not path.startswith("/"):
        raise ApiError(400, f"{BAD_BODY}: upstream {upstream!r}: a Unix socket path must be absolute")
    return path


def check_listen(address: Any) -> str:
    """Refuse any listen address off loopback: jobquake never listens beyond it."""
    if not isinstance(address, str):
        raise ApiError(400, f"{BAD_BODY}: listen must be a string")
    loopback_listen(address)
    return address


def loopback_listen(address: str) -> tuple[str, int]:
    """The (ip, port) to bind for a listen address: 127.0.0.1 or [::1] (the addresses every service of
    the harness uses), a port of 1024 or above (or 0: any). Not the rest of 127.0.0.0/8, nor a
    privileged port, which a proxy run as root could otherwise take from the machine's own services."""
    host, port = split_address(address, "listen")
    if host == "localhost":
        host = "127.0.0.1"  # one address, so port 0 gets one port
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is None or str(ip) not in LISTEN_HOSTS:
        raise ApiError(400, f"listen address {address!r} is not on loopback at 127.0.0.1, localhost or [::1]: "
                            "jobquake proxies listen nowhere else")
    if 0 < port < FIRST_UNPRIVILEGED_PORT:
        raise ApiError(400, f"listen address {address!r}: port {port} is privileged; "
                            f"jobquake proxies listen on {FIRST_UNPRIVILEGED_PORT} and above")
    return str(ip), port


def split_address(address: str, what: str) -> tuple[str, int]:
    """``"host:port"`` or ``"[v6]:port"`` -> (host, port)."""
    host, sep, port_text = address.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ApiError(400, f"{BAD_BODY}: {what} address {address!r} is not host:port")
    return host, int(port_text)


def join_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
