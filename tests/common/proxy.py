"""Loopback upstreams, an embedded proxy server and socket helpers for the proxy tests."""
from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from harness.proxy import ProxyClient, ProxyServer

HOST = "127.0.0.1"
IO_TIMEOUT = 10.0  # seconds; no healthy socket operation here comes near it
QUIET = 0.3  # seconds a connection must stay silent to count as "held"


class _Upstream(socketserver.ThreadingTCPServer):
    """A loopback TCP server that counts what it receives and closes its sockets on demand."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, handler: type[socketserver.BaseRequestHandler]):
        super().__init__((HOST, 0), handler)
        self.received = 0
        self.accepted = 0
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                         daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"{HOST}:{self.server_address[1]}"

    def process_request(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        with self._lock:
            self.accepted += 1
            self._open.add(request)
        super().process_request(request, client_address)

    def count(self, n: int) -> None:
        with self._lock:
            self.received += n

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        with self._lock:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed by its handler
                sock.close()
        self._thread.join(IO_TIMEOUT)


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while True:
            try:
                data = self.request.recv(65536)
                if not data:
                    return
                self.server.count(len(data))  # type: ignore[attr-defined]
                self.request.sendall(data)
            except OSError:
                return


class _Greeter(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(b"hello")
        self.request.shutdown(socket.SHUT_WR)


@pytest.fixture
def echo() -> Iterator[_Upstream]:
    """An echo server: sends back whatever it receives."""
    server = _Upstream(_Echo)
    yield server
    server.stop()


@pytest.fixture
def greeter() -> Iterator[_Upstream]:
    """Sends b"hello" to each connection, then closes it."""
    server = _Upstream(_Greeter)
    yield server
    server.stop()


@pytest.fixture
def proxy_server() -> Iterator[ProxyServer]:
    with ProxyServer(seed=7) as server:
        yield server


@pytest.fixture
def client(proxy_server: ProxyServer) -> Iterator[ProxyClient]:
    with ProxyClient(proxy_server.url) as api:
        yield api


def connect(port: int) -> socket.socket:
    sock = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise AssertionError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return data


def read_until_closed(sock: socket.socket, timeout: float = IO_TIMEOUT) -> tuple[bytes, str]:
    """Everything up to the close, and how it closed: "eof" or "reset"."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        return data, "reset"
    return data, "eof"


def stays_open_and_silent(sock: socket.socket, seconds: float = QUIET) -> bool:
    """True if nothing (no data, no close) arrives for ``seconds``."""
    sock.settimeout(seconds)
    try:
        sock.recv(1)
    except TimeoutError:
        return True
    finally:
        sock.settimeout(IO_TIMEOUT)
    return False


def round_trip(port: int, payload: bytes = b"ping") -> bytes:
    with connect(port) as sock:
        sock.sendall(payload)
        return recv_exactly(sock, len(payload))


def refused(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=IO_TIMEOUT):
            return False
    except ConnectionRefusedError:
        return True


def elapsed_since(start: float) -> float:
    return time.monotonic() - start
