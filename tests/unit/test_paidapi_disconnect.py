"""A client that hangs up does not stop the provider: the call is still billed."""
from __future__ import annotations

import json
import socket
from typing import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from harness._wait import wait_until
from tests.common.paidapi import ProviderBed, paidapi_testbed


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


def send_raw_call(url: str, job_id: str) -> socket.socket:
    """Send a model call on a bare socket, so the test decides when the client hangs up."""
    address = urlsplit(url)
    body = json.dumps({"prompt": "p"}).encode()
    head = (f"POST /v1/generate HTTP/1.1\r\nHost: {address.netloc}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"X-Job-Id: {job_id}\r\n\r\n")
    sock = socket.create_connection((address.hostname, address.port), timeout=5)
    sock.sendall(head.encode() + body)
    return sock


def client_gone(api: ProviderBed, call_id: int) -> bool:
    return api.record(call_id)["client_gone"]


def test_a_held_call_whose_client_left_is_billed_on_release(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="j")
    sock = send_raw_call(api.url, "j")
    held = gate.wait(timeout=5)
    sock.close()  # the worker dies while its model call is in flight
    wait_until(lambda: client_gone(api, held["call_id"]), timeout=5, what="client_gone recorded")
    assert api.record(held["call_id"])["billed"] is False

    gate.heal()
    done = api.control.wait_for_call(job_id="j", state="done", timeout=5)
    assert (done["billed"], done["client_gone"], done["status"]) == (True, True, 200)


def test_a_client_that_times_out_mid_generation_is_still_billed(api: ProviderBed) -> None:
    api.control.settings(profile="fixed:100")  # 1 s at scale 0.01; the client waits 50 ms
    with pytest.raises(httpx.ReadTimeout):
        api.call(job_id="j", timeout=0.05)
    done = api.control.wait_for_call(job_id="j", state="done", timeout=10)
    assert (done["billed"], done["client_gone"]) == (True, True)
    assert done["t_end"] - done["t_start"] >= 0.99  # asyncio timers may fire a hair early


def test_a_client_that_stays_is_not_marked_gone(api: ProviderBed) -> None:
    api.call(job_id="j")
    (record,) = api.control.ledger()
    assert record["client_gone"] is False


def test_a_hung_call_whose_client_left_is_failed_when_healed(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang")
    sock = send_raw_call(api.url, "j")
    hung = api.control.wait_for_call(job_id="j", state="hung", timeout=5)
    sock.close()
    wait_until(lambda: client_gone(api, hung["call_id"]), timeout=5, what="client_gone recorded")

    rule.heal()
    failed = api.control.wait_for_call(job_id="j", state="failed", timeout=5)
    assert (failed["status"], failed["billed"], failed["client_gone"]) == (503, False, True)
