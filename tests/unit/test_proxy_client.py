"""ProxyClient: explicit base URL, a timeout on every call, an error on any non-2xx."""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.errors import HarnessError
from harness.proxy import Proxy, ProxyAPIError, ProxyClient, ProxyServer, Toxic
from tests.common.proxy import (  # noqa: F401  (fixtures)
    client,
    echo,
    elapsed_since,
    proxy_server,
    refused,
    round_trip,
)


class _Unavailable(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        body = b'{"error": "upstream maintenance", "status": 503}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep the test output clean


@pytest.fixture
def unavailable_server() -> Iterator[str]:
    """An HTTP server answering 503 to everything."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unavailable)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts TCP connections (kernel backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_4xx_raises_with_the_status_and_the_servers_message(client: ProxyClient) -> None:
    with pytest.raises(ProxyAPIError) as caught:
        client.get_proxy("ghost")
    assert caught.value.status == 404
    assert caught.value.message == "proxy not found"
    assert "GET" in str(caught.value) and "/proxies/ghost" in str(caught.value)
    assert isinstance(caught.value, HarnessError)


def test_a_5xx_from_the_proxy_raises(client: ProxyClient) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(ProxyAPIError) as caught:
            client.create("svc", "127.0.0.1:9", listen=f"127.0.0.1:{taken.getsockname()[1]}")
    assert caught.value.status == 500
    assert caught.value.message.startswith("listen tcp")


def test_any_5xx_raises_not_only_the_proxys_own(unavailable_server: str) -> None:
    with ProxyClient(unavailable_server) as api, pytest.raises(ProxyAPIError) as caught:
        api.proxies()
    assert caught.value.status == 503 and caught.value.message == "upstream maintenance"


def test_a_server_that_never_answers_times_out(silent_server: str) -> None:
    start = time.monotonic()
    with ProxyClient(silent_server, timeout=0.3) as api, pytest.raises(ProxyAPIError) as caught:
        api.version()
    assert caught.value.status is None and "no answer within 0.3s" in caught.value.message
    assert elapsed_since(start) < 3.0
    with ProxyClient(silent_server, timeout=0.3) as api:
        assert api.running() is False


def test_nothing_listening_raises_without_a_status() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        with ProxyClient(f"http://127.0.0.1:{port}", timeout=2) as api, pytest.raises(ProxyAPIError) as caught:
            api.reset()
    assert caught.value.status is None and "ConnectError" in caught.value.message


def test_two_clients_drive_two_servers_side_by_side(echo) -> None:
    with ProxyServer(seed=1) as one, ProxyServer(seed=2) as two, \
            ProxyClient(one.url) as first, ProxyClient(two.url) as second:
        first.create("only_on_one", echo.address)
        second.create("only_on_two", echo.address)
        assert set(first.proxies()) == {"only_on_one"}
        assert set(second.proxies()) == {"only_on_two"}


def test_proxy_objects_show_and_change_the_servers_state(client: ProxyClient, echo) -> None:
    proxy = client.create("svc", echo.address)
    assert isinstance(proxy, Proxy)
    assert (proxy.name, proxy.upstream, proxy.enabled) == ("svc", echo.address, True)
    assert proxy.listen == f"127.0.0.1:{proxy.listen_port}" and proxy.listen_port > 0
    assert round_trip(proxy.listen_port) == b"ping"
    proxy.disable()
    assert not proxy.enabled and not client.get_proxy("svc").enabled
    assert refused(proxy.listen_port)
    proxy.enable()
    assert proxy.enabled and round_trip(proxy.listen_port) == b"ping"
    proxy.destroy()
    assert client.proxies() == {}


def test_toxics_are_added_listed_updated_and_removed(client: ProxyClient, echo) -> None:
    proxy = client.create("svc", echo.address)
    added = proxy.add_toxic("latency", attributes={"latency": 10})
    assert added == Toxic("latency_downstream", "latency", "downstream", 1.0, {"latency": 10, "jitter": 0})
    named = proxy.add_toxic("timeout", name="hang", stream="upstream", toxicity=0.0)
    assert (named.name, named.stream, named.toxicity) == ("hang", "upstream", 0.0)
    assert list(proxy.toxics()) == ["hang", "latency_downstream"]
    updated = proxy.update_toxic("latency_downstream", attributes={"jitter": 3}, toxicity=0.5)
    assert updated.attributes == {"latency": 10, "jitter": 3} and updated.toxicity == 0.5
    assert proxy.get_toxic("latency_downstream") == updated
    proxy.remove_toxic("hang")
    assert list(proxy.toxics()) == ["latency_downstream"]
    with pytest.raises(ProxyAPIError) as caught:
        proxy.remove_toxic("hang")
    assert caught.value.status == 404


def test_populate_reset_version_and_destroy_all(client: ProxyClient, echo) -> None:
    created = client.populate([{"name": "a", "upstream": echo.address},
                               {"name": "b", "upstream": echo.address, "enabled": False}])
    assert [(p.name, p.enabled) for p in created] == [("a", True), ("b", False)]
    client.proxies()["a"].add_toxic("latency")
    client.reset()
    assert all(p.enabled and not p.toxics() for p in client.proxies().values())
    assert client.version() and client.running()
    client.destroy_all()
    assert client.proxies() == {}


def test_the_embedded_proxy_counts_bytes_per_proxy_and_per_toxic_while_it_acts(client: ProxyClient, echo) -> None:
    proxy = client.create("svc", echo.address)
    proxy.add_toxic("latency", name="idle", stream="upstream", toxicity=0.0)  # set, but never acts
    proxy.add_toxic("latency", name="slow", attributes={"latency": 1})
    assert round_trip(proxy.listen_port) == b"ping"
    proxy.refresh()
    assert proxy.traffic == {"upstream": 4, "downstream": 4}
    assert proxy.get_toxic("slow").bytes_seen == 4
    assert proxy.get_toxic("idle").bytes_seen == 0


def test_a_real_toxiproxy_sends_no_byte_counts_and_the_client_says_none(client: ProxyClient) -> None:
    toxiproxy_toxic = {"name": "t", "type": "latency", "stream": "downstream", "toxicity": 1.0,
                       "attributes": {"latency": 1, "jitter": 0}}
    assert Toxic.from_json(toxiproxy_toxic).bytes_seen is None
    toxiproxy_proxy = {"name": "p", "listen": "127.0.0.1:1", "upstream": "127.0.0.1:2", "enabled": True,
                       "toxics": [toxiproxy_toxic]}
    assert Proxy(client, toxiproxy_proxy).traffic is None
