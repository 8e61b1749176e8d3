"""What one SQS request costs the embedded SQS server: moto's SQS alone against ``python -m moto.server``.

The process backend serves SQS with ``harness/stack/moto_main.py``: moto's
SQS and control apps, routed by path, unlogged. ``python -m moto.server``
serves every AWS service and works out, per request, which one is asked.
Both servers run side by side (each its own process on loopback, two
queues as refapp has), and one boto3 client sends them the requests the
harness and the app send most, in alternating rounds so that both see the
same machine: ``GetQueueAttributes`` (the harness's pending-work read),
``ListQueues`` and an empty ``ReceiveMessage`` (a consumer's poll, no
wait). The server's CPU is read from /proc. Prints the medians in ms of
server CPU per request and their ratio; writes
``benchmarks/results/sqs_server.json``.

    .venv/bin/python benchmarks/sqs_server.py [--rounds 7] [--requests 200]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx

from harness._ports import free_port
from harness._wait import wait_until
from harness.stack.sqs import LAUNCHER
from harness.stack.sqs_clients import sqs_client

RESULTS = Path(__file__).parent / "results" / "sqs_server.json"
HOST = "127.0.0.1"
SERVERS = {"moto_main.py (SQS alone)": [sys.executable, str(LAUNCHER)],
           "python -m moto.server": [sys.executable, "-m", "moto.server"]}


def start(argv: list[str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([*argv, "-H", HOST, "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://{HOST}:{port}"
    wait_until(lambda: httpx.get(f"{url}/moto-api/", timeout=1).status_code == 200, timeout=60,
               what=f"{argv[-1]} to answer")
    return proc, url


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def requests_of(client) -> dict[str, Callable[[], object]]:
    urls = [client.create_queue(QueueName=name)["QueueUrl"] for name in ("jobs-dlq", "jobs")]
    return {"GetQueueAttributes": lambda: client.get_queue_attributes(QueueUrl=urls[1], AttributeNames=["All"]),
            "ListQueues": client.list_queues,
            "ReceiveMessage (empty, no wait)": lambda: client.receive_message(QueueUrl=urls[1], WaitTimeSeconds=0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=200, help="of each kind, per server and round")
    args = parser.parse_args()
    running = {name: start(argv) for name, argv in SERVERS.items()}
    try:
        calls = {name: requests_of(sqs_client(url)) for name, (_, url) in running.items()}
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in SERVERS}
        for _ in range(args.rounds):
            for name, (proc, _) in running.items():  # alternating: both servers see the same machine
                for kind, call in calls[name].items():
                    before = cpu_s(proc.pid)
                    for _ in range(args.requests):
                        call()
                    per_request_ms = (cpu_s(proc.pid) - before) * 1000 / args.requests
                    samples[name].setdefault(kind, []).append(per_request_ms)
    finally:
        for proc, _ in running.values():
            proc.terminate()
            proc.wait(timeout=30)
    medians = {name: {kind: round(statistics.median(v), 2) for kind, v in kinds.items()}
               for name, kinds in samples.items()}
    lean, full = (medians[name] for name in SERVERS)
    ratios = {kind: round(lean[kind] / full[kind], 2) for kind in lean}
    for kind in lean:
        print(f"{kind:<32} server CPU per request: {lean[kind]:5.2f} ms SQS alone, {full[kind]:5.2f} ms "
              f"moto.server (ratio {ratios[kind]})")
    RESULTS.write_text(json.dumps({"cores": os.cpu_count(), "rounds": args.rounds, "requests": args.requests,
                                   "server_cpu_ms_per_request_median": medians, "ratio_alone_to_moto_server":
                                   ratios}, indent=1) + "\n")


if __name__ == "__main__":
    main()
