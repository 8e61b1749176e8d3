"""CPU per readiness probe: ``httpx.get`` (a client per call) against the shared probe client.

A starting service is probed every 10 ms until it answers; each probe of a
port that does not answer yet is what this measures (connection refused on
loopback). ``httpx.get`` builds a client, and so a TLS context loading the
CA bundle, on every call; ``harness.stack.probe_http.probe_client`` builds
one per process. Both are timed side by side in one run, in CPU time (the
process's own), median over repeats; writes ``benchmarks/results/probe.json``.

    .venv/bin/python benchmarks/probe.py [--calls 200] [--repeats 5]
"""
from __future__ import annotations

import argparse
import json
import platform
import socket
import statistics
import time
from pathlib import Path

import httpx

from harness.stack.probe_http import probe_client

RESULTS = Path(__file__).parent / "results" / "probe.json"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_ms_per_call(call, calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        try:
            call()
        except httpx.HTTPError:
            pass  # refused: the service is not up yet, as during a readiness wait
    return (time.process_time() - started) / calls * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{closed_port()}/health"
    cases = {"httpx.get per call": lambda: httpx.get(url, timeout=1.0),
             "shared probe client": lambda: probe_client().get(url)}
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats):  # interleaved, so machine noise hits both alike
        for name, call in cases.items():
            samples[name].append(cpu_ms_per_call(call, args.calls))
    medians = {name: round(statistics.median(values), 3) for name, values in samples.items()}
    ratio = round(medians["httpx.get per call"] / medians["shared probe client"], 1)
    for name, value in medians.items():
        print(f"{name:<22} {value:8.3f} ms CPU per probe (median of {args.repeats} x {args.calls})")
    print(f"ratio {ratio}x")
    RESULTS.write_text(json.dumps({"ms_cpu_per_probe": medians, "ratio": ratio, "calls": args.calls,
                                   "repeats": args.repeats, "python": platform.python_version()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
