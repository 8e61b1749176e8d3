"""The embedded SQS server: moto's SQS and control API alone, unlogged, ended cleanly by a stop."""
from __future__ import annotations

import signal
import subprocess
import sys

import httpx
import pytest

from harness._ports import free_port
from harness._wait import wait_until
from harness.stack.sqs import LAUNCHER
from harness.stack.sqs_clients import sqs_client

pytestmark = pytest.mark.integration

HOST = "127.0.0.1"


@pytest.fixture
def server(tmp_path):
    port = free_port()
    log = tmp_path / "sqs.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, str(LAUNCHER), "-H", HOST, "-p", str(port)], stdout=out,
                                stderr=subprocess.STDOUT)
    url = f"http://{HOST}:{port}"
    try:
        wait_until(lambda: httpx.get(f"{url}/moto-api/", timeout=1).status_code == 200, timeout=60,
                   what="the SQS server to answer")
        yield proc, url, log
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def test_it_serves_sqs_and_a_reset_forgets_every_queue(server):
    _, url, _ = server
    sqs = sqs_client(url)
    queue = sqs.create_queue(QueueName="jobs", Attributes={"VisibilityTimeout": "7"})["QueueUrl"]
    sqs.send_message(QueueUrl=queue, MessageBody="job-1")
    got = sqs.receive_message(QueueUrl=queue, AttributeNames=["All"])["Messages"]
    assert [m["Body"] for m in got] == ["job-1"]
    assert got[0]["Attributes"]["ApproximateReceiveCount"] == "1"
    assert sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])["Attributes"][
        "ApproximateNumberOfMessagesNotVisible"] == "1"

    httpx.post(f"{url}/moto-api/reset", timeout=5).raise_for_status()
    assert sqs.list_queues().get("QueueUrls", []) == []


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_requests_are_not_logged_and_a_stop_ends_it_with_status_0(server, stop):
    proc, url, log = server
    sqs = sqs_client(url)
    for _ in range(20):
        sqs.list_queues()
    proc.send_signal(stop)
    assert proc.wait(timeout=10) == 0
    lines = log.read_text().splitlines()
    assert not [line for line in lines if '"POST / HTTP' in line or '"GET /moto-api' in line], lines
    assert any(f"http://{HOST}:" in line for line in lines)  # says where it listens, once
