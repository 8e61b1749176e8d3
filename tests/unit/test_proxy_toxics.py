"""Each toxic's effect on real loopback connections through the embedded proxy."""
from __future__ import annotations

import random
import threading
import time

import pytest

from harness._wait import wait_until
from harness.proxy import ProxyClient
from harness.proxy.stages import slice_bounds
from tests.common.proxy import (  # noqa: F401  (fixtures)
    client,
    connect,
    echo,
    elapsed_since,
    greeter,
    proxy_server,
    read_until_closed,
    recv_exactly,
    stays_open_and_silent,
)

SLACK = 2.0  # seconds above a toxic's own delay that a noisy 2-core machine may add


def test_without_toxics_a_megabyte_passes_unchanged(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    payload = bytes(range(256)) * 4096
    with connect(proxy.listen_port) as sock:
        sender = threading.Thread(target=sock.sendall, args=(payload,))
        sender.start()
        received = recv_exactly(sock, len(payload))
        sender.join()
    assert received == payload


def test_latency_delays_every_reply_by_at_least_the_latency(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("latency", attributes={"latency": 200})
    with connect(proxy.listen_port) as sock:
        for message in (b"first", b"second"):
            start = time.monotonic()
            sock.sendall(message)
            assert recv_exactly(sock, len(message)) == message
            assert 0.2 <= elapsed_since(start) < 0.2 + SLACK


def test_latency_counts_from_arrival_so_pipelined_chunks_do_not_add_up(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("latency", attributes={"latency": 300})
    with connect(proxy.listen_port) as sock:
        start = time.monotonic()
        for i in range(1, 6):  # five replies, each sent separately by the echo server
            sock.sendall(b"ping")
            wait_until(lambda n=4 * i: echo.received >= n, timeout=5, what=f"echo of ping {i}")
        assert recv_exactly(sock, 20) == b"ping" * 5
        # One latency for all five (1.5 s if each waited for the one before).
        assert 0.3 <= elapsed_since(start) < 1.2


def _request_then_reply_times(port: int, echo, expected_total: int) -> tuple[float, float]:
    """Seconds from sending until the upstream has the request, and until the reply is back."""
    with connect(port) as sock:
        start = time.monotonic()
        sock.sendall(b"ping")
        wait_until(lambda: echo.received == expected_total, timeout=5, what="request at the upstream")
        request_seen = elapsed_since(start)
        recv_exactly(sock, 4)
        return request_seen, elapsed_since(start)


def test_upstream_latency_delays_the_request_downstream_latency_the_reply(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("latency", stream="upstream", attributes={"latency": 300})
    request_seen, _ = _request_then_reply_times(proxy.listen_port, echo, 4)
    assert request_seen >= 0.3
    proxy.remove_toxic("latency_upstream")
    proxy.add_toxic("latency", stream="downstream", attributes={"latency": 300})
    request_seen, reply_back = _request_then_reply_times(proxy.listen_port, echo, 8)
    # The echo answered as soon as it had the request; the wait is on the way back.
    # (0.25: the upstream is polled every 10 ms, so it is seen a little late.)
    assert reply_back - request_seen >= 0.25


@pytest.mark.parametrize("stream", ["upstream", "downstream"])
def test_timeout_zero_drops_data_and_holds_the_connection_until_removed_then_closes(
    client: ProxyClient, echo, stream: str
) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("timeout", stream=stream, attributes={"timeout": 0})
    with connect(proxy.listen_port) as sock:
        sock.sendall(b"lost")
        if stream == "downstream":  # the request reaches the server; its reply is dropped
            wait_until(lambda: echo.received == 4, timeout=5, what="request at the upstream")
        assert stays_open_and_silent(sock)
        assert stays_open_and_silent(sock)  # still held, still silent
        if stream == "upstream":
            assert echo.received == 0
        proxy.remove_toxic(f"timeout_{stream}")
        assert read_until_closed(sock, timeout=5) == (b"", "eof")


def test_after_the_timeout_toxic_is_removed_new_connections_pass(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("timeout", attributes={"timeout": 0})
    proxy.remove_toxic("timeout_downstream")
    with connect(proxy.listen_port) as sock:
        sock.sendall(b"ping")
        assert recv_exactly(sock, 4) == b"ping"


def test_timeout_closes_the_connection_after_the_timeout(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("timeout", attributes={"timeout": 300})
    start = time.monotonic()
    with connect(proxy.listen_port) as sock:
        sock.sendall(b"lost")
        assert read_until_closed(sock) == (b"", "eof")
    assert 0.3 <= elapsed_since(start) < 0.3 + SLACK


@pytest.mark.parametrize("stream", ["upstream", "downstream"])
def test_reset_peer_resets_the_connection(client: ProxyClient, echo, stream: str) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("reset_peer", stream=stream, attributes={"timeout": 0})
    with connect(proxy.listen_port) as sock:
        sock.sendall(b"ping")
        assert read_until_closed(sock) == (b"", "reset")


def test_reset_peer_waits_for_its_timeout(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("reset_peer", attributes={"timeout": 250})
    with connect(proxy.listen_port) as sock:
        start = time.monotonic()
        sock.sendall(b"ping")
        assert read_until_closed(sock) == (b"", "reset")
        assert 0.25 <= elapsed_since(start) < 0.25 + SLACK


def test_limit_data_delivers_exactly_the_limit_then_closes(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("limit_data", attributes={"bytes": 10})
    with connect(proxy.listen_port) as sock:
        sock.sendall(b"0123456789abcdefghij" * 5)
        assert read_until_closed(sock) == (b"0123456789", "eof")


def test_limit_data_upstream_lets_the_server_see_exactly_the_limit(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("limit_data", stream="upstream", attributes={"bytes": 4})
    with connect(proxy.listen_port) as sock:
        sock.sendall(b"0123456789")
        data, how = read_until_closed(sock)
    assert how == "eof"
    assert data in (b"", b"0123")  # the upstream socket is closed right after the 4 bytes
    wait_until(lambda: echo.received == 4, timeout=5, what="4 bytes at the upstream")
    assert echo.received == 4


def test_bandwidth_limits_the_rate(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("bandwidth", attributes={"rate": 100})  # KB/s
    payload = b"x" * 50_000  # 0.5 s at 100 KB/s
    with connect(proxy.listen_port) as sock:
        start = time.monotonic()
        sender = threading.Thread(target=sock.sendall, args=(payload,))
        sender.start()
        assert recv_exactly(sock, len(payload)) == payload
        sender.join()
        assert 0.45 <= elapsed_since(start) < 0.5 + SLACK


def test_slicer_splits_data_into_small_delayed_slices(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("slicer", attributes={"average_size": 20, "size_variation": 5, "delay": 10_000})
    payload = bytes(range(200))
    sizes: list[int] = []
    with connect(proxy.listen_port) as sock:
        sock.sendall(payload)
        received = b""
        while len(received) < len(payload):
            chunk = sock.recv(65536)
            assert chunk, "closed early"
            sizes.append(len(chunk))
            received += chunk
    assert received == payload
    # About ten slices 10 ms apart; a busy client may read two at once, never all together.
    assert len(sizes) >= 4, sizes


def test_slow_close_delays_the_close(client: ProxyClient, greeter) -> None:
    proxy = client.create("greeter", greeter.address)
    start = time.monotonic()
    with connect(proxy.listen_port) as sock:
        assert read_until_closed(sock) == (b"hello", "eof")
    prompt = elapsed_since(start)
    proxy.add_toxic("slow_close", attributes={"delay": 400})
    start = time.monotonic()
    with connect(proxy.listen_port) as sock:
        assert read_until_closed(sock) == (b"hello", "eof")
    delayed = elapsed_since(start)
    assert 0.4 <= delayed < 0.4 + SLACK
    assert prompt < delayed


def test_jitter_keeps_each_delay_within_latency_plus_or_minus_jitter(client: ProxyClient, echo) -> None:
    proxy = client.create("echo", echo.address)
    proxy.add_toxic("latency", attributes={"latency": 200, "jitter": 100})
    with connect(proxy.listen_port) as sock:
        for _ in range(3):
            start = time.monotonic()
            sock.sendall(b"ping")
            recv_exactly(sock, 4)
            assert 0.1 <= elapsed_since(start) < 0.3 + SLACK


@pytest.mark.parametrize("total", [1, 25, 26, 100, 1000, 65536])
@pytest.mark.parametrize("variation", [0, 5])
def test_slices_cover_the_chunk_in_order_and_stay_small(total: int, variation: int) -> None:
    bounds = slice_bounds(total, 20, variation, random.Random(total))
    assert bounds[0][0] == 0 and bounds[-1][1] == total
    assert all(start < end <= start + 20 + variation for start, end in bounds)
    assert all(before[1] == after[0] for before, after in zip(bounds, bounds[1:]))
