"""What the embedded proxy adds to a small HTTP request, and how many requests it carries.

A tiny keep-alive HTTP server (its own process) answers a few hundred bytes
per request; the proxy runs as the harness runs it, ``python -m
harness.proxy``, in its own process, with no toxic. One client measures the
same request direct and through the proxy, interleaved in the same run, then
the request rate through the proxy with one connection and with a few. Both
processes are reaped at the end. Targets: <= 1 ms added (median), >= 3,000
requests/s.

    .venv/bin/python benchmarks/proxy.py [--requests 2000]

prints a table and writes ``benchmarks/results/proxy.json``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness._ports import free_port, release_port
from harness._wait import wait_until
from harness.proxy.client import ProxyClient

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "proxy.json"
TARGET_ADDED_MEDIAN_MS = 1.0
TARGET_RPS = 3000.0
CONCURRENT_CONNECTIONS = 4
WARMUP = 200
REQUEST_BODY = b'{"job_id": "job-1", "prompt": "' + b"x" * 150 + b'"}'
REQUEST = (b"POST /v1/generate HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(REQUEST_BODY)) + REQUEST_BODY
RESPONSE_BODY = b'{"id": "gen-1", "status": "ok", "text": "' + b"y" * 250 + b'"}'
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(RESPONSE_BODY)) + RESPONSE_BODY


class _HttpProtocol(asyncio.Protocol):
    """Keep-alive HTTP/1.1 that answers every request with RESPONSE."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            length = _content_length(self.buffer[:head_end])
            end = head_end + 4 + length
            if len(self.buffer) < end:
                return
            self.buffer = self.buffer[end:]
            self.transport.write(RESPONSE)  # type: ignore[attr-defined]


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


async def _serve_http(port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(_HttpProtocol, "127.0.0.1", port)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()


class _Connection:
    """One blocking keep-alive connection that times request/response round trips."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def round_trip_ns(self) -> int:
        started = time.perf_counter_ns()
        self.sock.sendall(REQUEST)
        received = 0
        while received < len(RESPONSE):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection mid-response")
            received += len(chunk)
        return time.perf_counter_ns() - started

    def close(self) -> None:
        self.sock.close()


@contextmanager
def _process(command: list[str], ready: Callable[[], object], what: str) -> Iterator[subprocess.Popen[bytes]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_until(lambda: proc.poll() is None and ready(), timeout=15, what=what)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _accepts(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _interleaved(direct: _Connection, proxied: _Connection, n: int) -> tuple[list[float], list[float]]:
    direct_ms, proxied_ms = [], []
    for i in range(n):
        pair = (direct, proxied) if i % 2 else (proxied, direct)
        for conn in pair:
            elapsed = conn.round_trip_ns() / 1e6
            (direct_ms if conn is direct else proxied_ms).append(elapsed)
    return direct_ms, proxied_ms


def _rate(port: int, n: int, connections: int) -> float:
    """Requests per second over ``connections`` keep-alive connections, n requests in all."""
    conns = [_Connection(port) for _ in range(connections)]
    barrier = threading.Barrier(connections + 1)

    def work(conn: _Connection) -> None:
        barrier.wait()
        for _ in range(n // connections):
            conn.round_trip_ns()

    threads = [threading.Thread(target=work, args=(conn,)) for conn in conns]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    for conn in conns:
        conn.close()
    return (n // connections) * connections / elapsed


def measure_proxy(n_requests: int = 2000) -> dict:
    """Run the measurement; return the figures (milliseconds and requests/s)."""
    http_port, api_port = free_port(), free_port()
    http_cmd = [sys.executable, str(Path(__file__).resolve()), "--serve-http", str(http_port)]
    proxy_cmd = [sys.executable, "-m", "harness.proxy", "--port", str(api_port), "--seed", "0"]
    client = ProxyClient(f"http://127.0.0.1:{api_port}")
    try:
        with _process(http_cmd, lambda: _accepts(http_port), "benchmark HTTP server"), \
                _process(proxy_cmd, client.running, "proxy API"):
            proxy = client.create("bench_http", f"127.0.0.1:{http_port}")
            direct, proxied = _Connection(http_port), _Connection(proxy.listen_port)
            _interleaved(direct, proxied, WARMUP)
            direct_ms, proxied_ms = _interleaved(direct, proxied, n_requests)
            direct.close()
            proxied.close()
            rates = {
                "direct_sequential_rps": _rate(http_port, n_requests, 1),
                "proxy_sequential_rps": _rate(proxy.listen_port, n_requests, 1),
                "direct_concurrent_rps": _rate(http_port, n_requests, CONCURRENT_CONNECTIONS),
                "proxy_concurrent_rps": _rate(proxy.listen_port, n_requests, CONCURRENT_CONNECTIONS),
            }
    finally:
        client.close()
        release_port(http_port)
        release_port(api_port)
    return _summary(n_requests, direct_ms, proxied_ms, rates)


def _summary(n: int, direct_ms: list[float], proxied_ms: list[float], rates: dict[str, float]) -> dict:
    direct_median, proxied_median = statistics.median(direct_ms), statistics.median(proxied_ms)
    direct_p99, proxied_p99 = _percentile(direct_ms, 0.99), _percentile(proxied_ms, 0.99)
    return {
        "n_requests": n,
        "request_bytes": len(REQUEST),
        "response_bytes": len(RESPONSE),
        "concurrent_connections": CONCURRENT_CONNECTIONS,
        "direct_median_ms": round(direct_median, 4),
        "proxy_median_ms": round(proxied_median, 4),
        "added_median_ms": round(proxied_median - direct_median, 4),
        "direct_p99_ms": round(direct_p99, 4),
        "proxy_p99_ms": round(proxied_p99, 4),
        "added_p99_ms": round(proxied_p99 - direct_p99, 4),
        **{name: round(value, 1) for name, value in rates.items()},
        "target_added_median_ms": TARGET_ADDED_MEDIAN_MS,
        "target_rps": TARGET_RPS,
        "meets_targets": (proxied_median - direct_median <= TARGET_ADDED_MEDIAN_MS
                          and min(rates["proxy_sequential_rps"], rates["proxy_concurrent_rps"]) >= TARGET_RPS),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def _print_table(result: dict) -> None:
    rows = [
        ("median round trip, direct", f"{result['direct_median_ms']:.3f} ms"),
        ("median round trip, through proxy", f"{result['proxy_median_ms']:.3f} ms"),
        ("added by the proxy, median", f"{result['added_median_ms']:.3f} ms (target <= 1 ms)"),
        ("p99 round trip, direct", f"{result['direct_p99_ms']:.3f} ms"),
        ("p99 round trip, through proxy", f"{result['proxy_p99_ms']:.3f} ms"),
        ("added by the proxy, p99", f"{result['added_p99_ms']:.3f} ms"),
        ("requests/s, 1 connection, direct", f"{result['direct_sequential_rps']:.0f}"),
        ("requests/s, 1 connection, proxy", f"{result['proxy_sequential_rps']:.0f} (target >= 3000)"),
        (f"requests/s, {CONCURRENT_CONNECTIONS} connections, direct", f"{result['direct_concurrent_rps']:.0f}"),
        (f"requests/s, {CONCURRENT_CONNECTIONS} connections, proxy",
         f"{result['proxy_concurrent_rps']:.0f} (target >= 3000)"),
    ]
    width = max(len(label) for label, _ in rows)
    print(f"proxy benchmark: {result['n_requests']} requests of {result['request_bytes']} B, "
          f"answers of {result['response_bytes']} B")
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")
    print(f"  {'meets targets':<{width}}  {result['meets_targets']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--serve-http", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_http:
        asyncio.run(_serve_http(args.serve_http))
        return 0
    result = measure_proxy(args.requests)
    _print_table(result)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
