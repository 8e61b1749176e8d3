"""A small client for Toxiproxy's HTTP API: the embedded proxy's, or a real Toxiproxy's.

Why our own client rather than toxiproxy-python: that one keeps a single
global host/port for the whole process (two servers, say one per xdist
worker, cannot be driven side by side), sets no request timeout (a server
that hangs hangs the test run) and ignores 5xx answers (a toxic that failed
to apply looks applied). This one takes an explicit base URL, puts a timeout
on every request and raises ``ProxyAPIError`` on any non-2xx answer.

It uses only Toxiproxy's documented endpoints and fields, so it drives a real
Toxiproxy server too. Its vocabulary follows toxiproxy-python: ``create``,
``get_proxy``, ``proxies``, ``populate``, ``reset``, ``destroy_all``;
``Proxy.add_toxic``, ``toxics``, ``remove_toxic``, ``disable``, ``enable``,
``destroy``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, cast
from urllib.parse import quote

import httpx

from harness.errors import HarnessError
from harness.proxy.toxics import TRAFFIC

__all__ = ["DEFAULT_TIMEOUT", "Proxy", "ProxyAPIError", "ProxyClient", "Toxic"]

DEFAULT_TIMEOUT = 5.0  # seconds per request; the API answers in milliseconds


class ProxyAPIError(HarnessError):
    """The proxy API answered with an error, or did not answer (``status`` is None)."""

    def __init__(self, status: int | None, message: str, *, method: str = "", url: str = ""):
        where = f"{method} {url}: " if method else ""
        code = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(f"{where}{code}: {message}")
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Toxic:
    """A toxic as the API shows it."""

    name: str
    type: str
    stream: str
    toxicity: float
    attributes: dict[str, Any] = field(default_factory=dict)
    # bytes that went through it while it was set: the embedded proxy's extension
    # ``jobquake_bytes``; None from a real Toxiproxy, which counts nothing
    bytes_seen: int | None = field(default=None, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Toxic:
        seen = data.get(TRAFFIC)
        return cls(data["name"], data["type"], data["stream"], float(data["toxicity"]),
                   dict(data.get("attributes") or {}), seen if isinstance(seen, int) else None)


class Proxy:
    """A proxy on the server; properties show its state as of the last answer."""

    def __init__(self, client: ProxyClient, data: dict[str, Any]):
        self._client = client
        self._data = data

    @property
    def name(self) -> str:
        return cast("str", self._data["name"])

    @property
    def listen(self) -> str:
        """host:port it listens on (the real port, once listening)."""
        return cast("str", self._data["listen"])

    @property
    def upstream(self) -> str:
        """host:port it forwards to."""
        return cast("str", self._data["upstream"])

    @property
    def enabled(self) -> bool:
        return bool(self._data["enabled"])

    @property
    def traffic(self) -> dict[str, int] | None:
        """Bytes through it per stream (``upstream``, ``downstream``) as of the last answer.

        The embedded proxy's extension ``jobquake_bytes``; None from a real Toxiproxy.
        """
        seen = self._data.get(TRAFFIC)
        return dict(seen) if isinstance(seen, dict) else None

    @property
    def listen_port(self) -> int:
        return int(self.listen.rpartition(":")[2])

    def __repr__(self) -> str:
        state = "enabled" if self.enabled else "disabled"
        return f"<Proxy {self.name} {self.listen} -> {self.upstream} {state}>"

    def toxics(self) -> dict[str, Toxic]:
        """The proxy's toxics by name (upstream ones first, as the server lists them)."""
        return {t["name"]: Toxic.from_json(t) for t in self._client.request("GET", self._path("toxics"))}

    def get_toxic(self, name: str) -> Toxic:
        return Toxic.from_json(self._client.request("GET", self._path("toxics", name)))

    def add_toxic(self, type: str, name: str | None = None, stream: str = "downstream",
                  toxicity: float = 1.0, attributes: dict[str, Any] | None = None) -> Toxic:
        """Add a toxic; it applies to open connections too. Name defaults to ``<type>_<stream>``."""
        body: dict[str, Any] = {"type": type, "stream": stream, "toxicity": toxicity,
                                "attributes": attributes or {}}
        if name is not None:
            body["name"] = name
        return Toxic.from_json(self._client.request("POST", self._path("toxics"), body))

    def update_toxic(self, name: str, attributes: dict[str, Any] | None = None,
                     toxicity: float | None = None) -> Toxic:
        """Change some attributes and/or the toxicity; the others keep their values."""
        body: dict[str, Any] = {}
        if attributes is not None:
            body["attributes"] = attributes
        if toxicity is not None:
            body["toxicity"] = toxicity
        return Toxic.from_json(self._client.request("POST", self._path("toxics", name), body))

    def remove_toxic(self, name: str) -> None:
        self._client.request("DELETE", self._path("toxics", name))

    def disable(self) -> None:
        """Stop listening and drop every connection (Toxiproxy's "down")."""
        self.update(enabled=False)

    def enable(self) -> None:
        self.update(enabled=True)

    def update(self, **fields: Any) -> None:
        """Change ``listen``, ``upstream`` and/or ``enabled``; a new address restarts the proxy."""
        self._data = self._client.request("POST", self._path(), fields)

    def refresh(self) -> None:
        """Reload the state shown by the properties."""
        self._data = self._client.request("GET", self._path())

    def destroy(self) -> None:
        self._client.request("DELETE", self._path())

    def _path(self, *parts: str) -> str:
        return "/".join(["/proxies", quote(self.name, safe=""), *(quote(p, safe="") for p in parts)])


class ProxyClient:
    """Client of one proxy API server, e.g. ``ProxyClient("http://127.0.0.1:8474")``."""

    def __init__(self, base_url: str, timeout: float = DEFAULT_TIMEOUT):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout)

    def version(self) -> str:
        answer = self.request("GET", "/version")
        return answer["version"] if isinstance(answer, dict) else str(answer)

    def running(self) -> bool:
        """True if the server answers (for readiness polling)."""
        try:
            self.version()
        except ProxyAPIError:
            return False
        return True

    def proxies(self) -> dict[str, Proxy]:
        return {name: Proxy(self, data) for name, data in self.request("GET", "/proxies").items()}

    def get_proxy(self, name: str) -> Proxy:
        return Proxy(self, self.request("GET", f"/proxies/{quote(name, safe='')}"))

    def create(self, name: str, upstream: str, listen: str = "127.0.0.1:0", enabled: bool = True) -> Proxy:
        """Create a proxy; with port 0 in ``listen`` the returned proxy shows the real port."""
        body = {"name": name, "upstream": upstream, "listen": listen, "enabled": enabled}
        return Proxy(self, self.request("POST", "/proxies", body))

    def populate(self, proxies: list[dict[str, Any]]) -> list[Proxy]:
        """Create or replace proxies; those already matching listen and upstream stay as they are."""
        answer = self.request("POST", "/populate", proxies)
        return [Proxy(self, data) for data in answer["proxies"]]

    def reset(self) -> None:
        """Enable every proxy and remove every toxic."""
        self.request("POST", "/reset")

    def destroy_all(self) -> None:
        for proxy in self.proxies().values():
            proxy.destroy()

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One API call: the decoded JSON answer (None when empty); raises on any non-2xx."""
        try:
            response = self._http.request(method, path, json=body)
        except httpx.TimeoutException as exc:
            raise ProxyAPIError(None, f"no answer within {self.timeout}s ({exc!r})",
                                method=method, url=self.base_url + path) from exc
        except httpx.HTTPError as exc:
            raise ProxyAPIError(None, f"{type(exc).__name__}: {exc}", method=method,
                                url=self.base_url + path) from exc
        if not response.is_success:
            raise ProxyAPIError(response.status_code, _error_message(response), method=method,
                                url=self.base_url + path)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:  # older Toxiproxy servers answer /version in plain text
            return response.text.strip()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ProxyClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip() or response.reason_phrase
    if isinstance(body, dict) and "error" in body:
        return str(body["error"])
    return response.text.strip()
