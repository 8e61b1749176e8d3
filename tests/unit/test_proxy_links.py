"""Live connections under change: toxics added/updated/removed, disable/enable, new upstream, toxicity."""
from __future__ import annotations

import time

from harness._ports import free_port, release_port
from harness._wait import wait_until
from harness.proxy import ProxyClient, ProxyServer
from tests.common.proxy import (  # noqa: F401  (fixtures)
    client,
    connect,
    echo,
    elapsed_since,
    greeter,
    proxy_server,
    read_until_closed,
    recv_exactly,
    refused,
    round_trip,
    stays_open_and_silent,
)

SLACK = 2.0


def _timed_round_trip(sock, message: bytes = b"ping") -> float:
    start = time.monotonic()
    sock.sendall(message)
    assert recv_exactly(sock, len(message)) == message
    return elapsed_since(start)


def test_a_toxic_added_to_an_open_connection_applies_to_it(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    with connect(proxy.listen_port) as sock:
        assert _timed_round_trip(sock) < 0.6
        proxy.add_toxic("latency", attributes={"latency": 600})
        assert 0.6 <= _timed_round_trip(sock) < 0.6 + SLACK
        proxy.remove_toxic("latency_downstream")
        assert _timed_round_trip(sock) < 0.6


def test_removing_a_latency_toxic_releases_what_it_holds_at_once(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("latency", attributes={"latency": 10_000})
    with connect(proxy.listen_port) as sock:
        start = time.monotonic()
        sock.sendall(b"ping")
        wait_until(lambda: echo.received == 4, timeout=5, what="request at the upstream")
        proxy.remove_toxic("latency_downstream")
        assert recv_exactly(sock, 4) == b"ping"
        assert elapsed_since(start) < SLACK  # not the 10 s of the latency


def test_updating_a_toxic_changes_it_for_open_connections(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("latency", attributes={"latency": 10_000})
    with connect(proxy.listen_port) as sock:
        updated = proxy.update_toxic("latency_downstream", attributes={"latency": 150})
        assert updated.attributes == {"latency": 150, "jitter": 0}
        assert 0.15 <= _timed_round_trip(sock) < 0.15 + SLACK


def test_a_timeout_toxic_added_to_an_open_connection_starves_it(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    with connect(proxy.listen_port) as sock:
        assert _timed_round_trip(sock) < SLACK
        proxy.add_toxic("timeout", attributes={"timeout": 0})
        sock.sendall(b"lost")
        assert stays_open_and_silent(sock)
        client.reset()  # removes every toxic: the starved connection is closed
        assert read_until_closed(sock, timeout=5) == (b"", "eof")


def test_disable_closes_connections_and_refuses_new_ones_enable_accepts_again(
    client: ProxyClient, echo
) -> None:
    proxy = client.create("echo", echo.address)
    port = proxy.listen_port
    with connect(port) as sock:
        assert _timed_round_trip(sock) < SLACK
        proxy.disable()
        assert not proxy.enabled
        data, _ = read_until_closed(sock, timeout=5)
        assert data == b""
    assert refused(port)
    proxy.enable()
    assert proxy.enabled and proxy.listen_port == port
    assert round_trip(port) == b"ping"


def test_reset_enables_disabled_proxies(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address, enabled=False)
    assert proxy.listen == "127.0.0.1:0"  # never bound while disabled
    client.reset()
    proxy.refresh()
    assert proxy.enabled
    assert round_trip(proxy.listen_port) == b"ping"


def test_a_new_upstream_drops_open_connections_and_serves_new_ones(client: ProxyClient, echo, greeter) -> None:
    proxy = client.create("svc", echo.address)
    port = proxy.listen_port
    with connect(port) as sock:
        assert _timed_round_trip(sock) < SLACK
        proxy.update(upstream=greeter.address)
        assert read_until_closed(sock, timeout=5)[0] == b""
    assert proxy.upstream == greeter.address and proxy.listen_port == port
    with connect(port) as sock:
        assert read_until_closed(sock) == (b"hello", "eof")


def test_an_unreachable_upstream_closes_the_client_connection(client: ProxyClient) -> None:
    port = free_port()  # claimed, and nobody listens on it
    try:
        proxy = client.create("nowhere", f"127.0.0.1:{port}")
        with connect(proxy.listen_port) as sock:
            assert read_until_closed(sock, timeout=5)[0] == b""
    finally:
        release_port(port)


def _pattern(client: ProxyClient, echo, toxicity: float, connections: int = 20) -> list[bool]:
    """For each new connection in turn: did the limit_data toxic apply to it?"""
    proxy = client.create("p", echo.address)
    proxy.add_toxic("limit_data", toxicity=toxicity, attributes={"bytes": 2})
    affected = []
    for _ in range(connections):
        with connect(proxy.listen_port) as sock:
            sock.sendall(b"0123456789")
            received = b""
            while len(received) < 10 and (chunk := sock.recv(64)):
                received += chunk
        assert received in (b"01", b"0123456789")
        affected.append(received == b"01")
    proxy.destroy()
    return affected


def test_toxicity_zero_never_applies(client: ProxyClient, echo) -> None:
    assert _pattern(client, echo, 0.0, connections=10) == [False] * 10


def test_toxicity_one_always_applies(client: ProxyClient, echo) -> None:
    assert _pattern(client, echo, 1.0, connections=10) == [True] * 10


def _pattern_with_seed(seed: int, echo) -> list[bool]:
    with ProxyServer(seed=seed) as server, ProxyClient(server.url) as api:
        return _pattern(api, echo, 0.5)


def test_half_toxicity_gives_the_same_pattern_for_the_same_seed(echo) -> None:
    first = _pattern_with_seed(11, echo)
    assert first == _pattern_with_seed(11, echo)
    assert 0 < sum(first) < len(first)  # a real mix, not all or nothing
    assert first != _pattern_with_seed(12, echo)



def test_a_disabled_proxy_keeps_its_port_from_anyone_else_until_it_listens_again(client: ProxyClient, echo) -> None:
    import socket

    proxy = client.create("held", echo.address)
    port = proxy.listen_port
    proxy.disable()
    assert refused(port)
    for options in ((), (socket.SO_REUSEADDR,), (socket.SO_REUSEADDR, socket.SO_REUSEPORT)):
        with socket.socket() as other:
            for option in options:
                other.setsockopt(socket.SOL_SOCKET, option, 1)
            try:
                other.bind(("127.0.0.1", port))
                other.listen()
            except OSError:
                continue
            raise AssertionError(f"another socket took the disabled proxy's port (options {options})")
    proxy.enable()
    assert proxy.listen_port == port and round_trip(port) == b"ping"
    proxy.destroy()  # deleted: the port is given back
    with socket.socket() as other:
        # SO_REUSEADDR past the round trip's TIME_WAIT; while the proxy held it, bind and listen failed so too
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", port))
