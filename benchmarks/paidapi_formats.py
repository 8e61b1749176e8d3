"""What one paid-API call costs in each wire format, through the official clients.

The fake provider runs as the harness runs it (``python -m harness.paidapi``,
its own process) with a zero latency profile, so the figure is the
provider's own overhead plus the client's: parsing, attribution, the ledger,
the answer's schema. Each route is called ``--calls`` times after a warm-up,
one call at a time; the process is reaped at the end. Target: median
<= 10 ms per call for every route, small against the 55 ms median latency
the default profile draws at the tests' time scale (0.01): the fake must
never be what a scenario waits for. The machine's load average is stored
with the figures.

    .venv/bin/python benchmarks/paidapi_formats.py [--calls 300]

prints a table and writes ``benchmarks/results/paidapi_formats.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import anthropic
import httpx
import openai

from harness._ports import free_port, release_port
from harness._wait import wait_until
from harness.paidapi.control import PaidAPIControl

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "paidapi_formats.json"
TARGET_MEDIAN_MS = 10.0
WARMUP = 30
MESSAGES = [{"role": "user", "content": "Invoice #12 from ACME, total $30, due in 30 days."}]


def routes(url: str) -> dict[str, Callable[[], Any]]:
    """One call per route, as an app makes it."""
    oa = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-bench", max_retries=0)
    an = anthropic.Anthropic(base_url=url, api_key="sk-bench", max_retries=0)
    raw = httpx.Client()
    return {
        "jobquake /v1/generate (httpx)": lambda: raw.post(
            f"{url}/v1/generate", json={"prompt": MESSAGES[0]["content"]}).raise_for_status(),
        "openai chat": lambda: oa.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES),
        "openai chat, streamed": lambda: list(oa.chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, stream=True)),
        "openai responses": lambda: oa.responses.create(model="gpt-4.1-mini", input="x"),
        "openai responses, streamed": lambda: list(oa.responses.create(
            model="gpt-4.1-mini", input="x", stream=True)),
        "openai embeddings (1536)": lambda: oa.embeddings.create(
            model="text-embedding-3-small", input="x"),
        "anthropic messages": lambda: an.messages.create(
            model="claude-3-5-haiku-latest", max_tokens=64, messages=MESSAGES),
        "anthropic messages, streamed": lambda: list(an.messages.create(
            model="claude-3-5-haiku-latest", max_tokens=64, messages=MESSAGES, stream=True)),
    }


def measure(call: Callable[[], Any], calls: int) -> dict[str, float]:
    """Median and p95 milliseconds of ``calls`` calls after a warm-up."""
    for _ in range(WARMUP):
        call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"median_ms": round(statistics.median(times), 3),
            "p95_ms": round(times[int(len(times) * 0.95) - 1], 3)}


def run(calls: int) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    child = subprocess.Popen([sys.executable, "-m", "harness.paidapi", "--port", str(port),
                              "--profile", "fixed:0", "--seed", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with PaidAPIControl(url, timeout=1.0) as control:
            wait_until(control.health, timeout=10, what="paidapi answers /health")
            figures = {}
            for name, call in routes(url).items():
                figures[name] = measure(call, calls)
                control.reset()  # keep the ledger small: it is scanned by every long-poll
        return {"calls_per_route": calls, "target_median_ms": TARGET_MEDIAN_MS,
                "python": platform.python_version(), "cpus": _cpus(),
                "load_average": [round(x, 2) for x in os.getloadavg()], "routes": figures}
    finally:
        child.terminate()  # by pid: the one process this script started
        child.wait(timeout=10)
        release_port(port)


def _cpus() -> int:
    return os.cpu_count() or 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args(argv)
    result = run(args.calls)
    print(f"{'route':34} {'median ms':>10} {'p95 ms':>8}")
    for name, figures in result["routes"].items():
        flag = "" if figures["median_ms"] <= TARGET_MEDIAN_MS else "  over target"
        print(f"{name:34} {figures['median_ms']:>10.2f} {figures['p95_ms']:>8.2f}{flag}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
