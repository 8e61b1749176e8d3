"""The control API and its client: long-polls, reset, errors and timeouts."""
from __future__ import annotations

import socket
import time
from typing import Iterator

import httpx
import pytest

from harness._ports import free_port, release_port
from harness.errors import HarnessError, WaitTimeout
from harness.paidapi.control import PaidAPIControl, PaidAPIError, PaidAPIWaitTimeout
from tests.common.paidapi import ProviderBed, paidapi_testbed

LONG_POLL = 30.0  # seconds; a wait that returns well before this returned on the event


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


def test_health(api: ProviderBed) -> None:
    assert api.control.health() is True


def test_wait_returns_as_soon_as_the_call_appears(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="j")
    started = time.monotonic()
    waiting = api.pool.submit(api.control.wait_for_call, job_id="j", state="held",
                              timeout=LONG_POLL)
    api.call_in_background(job_id="j")
    record = waiting.result(timeout=10)
    assert record["job_id"] == "j" and record["state"] == "held"
    assert time.monotonic() - started < LONG_POLL / 3
    gate.heal()


def test_wait_times_out_with_408(api: ProviderBed) -> None:
    started = time.monotonic()
    with pytest.raises(PaidAPIWaitTimeout) as caught:
        api.control.wait_for_call(job_id="nobody", timeout=0.2)
    assert time.monotonic() - started >= 0.2
    assert caught.value.status == 408
    assert "nobody" in caught.value.body["error"]
    assert isinstance(caught.value, WaitTimeout) and isinstance(caught.value, PaidAPIError)


def test_wait_after_skips_earlier_calls(api: ProviderBed) -> None:
    first = api.call(job_id="j", attempt=1).json()
    with pytest.raises(WaitTimeout):
        api.control.wait_for_call(job_id="j", state="any", after=first["call_id"], timeout=0.1)
    api.call(job_id="j", attempt=2)
    second = api.control.wait_for_call(job_id="j", state="billed", after=first["call_id"])
    assert second["attempt"] == 2


def test_ledger_filters_by_job_and_state(api: ProviderBed) -> None:
    api.control.set_mode("fail", job_id="bad")
    api.call(job_id="good")
    api.call(job_id="bad")
    assert [r["job_id"] for r in api.control.calls_for("bad")] == ["bad"]
    assert [r["job_id"] for r in api.control.billed()] == ["good"]
    assert [r["job_id"] for r in api.control.ledger(state="failed")] == ["bad"]


def test_reset_clears_everything_and_answers_open_calls(api: ProviderBed) -> None:
    api.call(job_id="done")
    api.control.set_mode("hang", job_id="hung")
    api.control.gate(job_id="held")
    hung = api.call_in_background(job_id="hung")
    held = api.call_in_background(job_id="held")
    api.control.wait_for_call(job_id="hung", state="hung", timeout=5)
    api.control.wait_for_call(job_id="held", state="held", timeout=5)
    last_id = api.control.ledger()[-1]["call_id"]

    api.control.reset()
    assert (hung.result(timeout=5).status_code, held.result(timeout=5).status_code) == (503, 503)
    assert api.control.ledger() == []
    assert api.control.modes() == [] and api.control.gates() == []
    after = api.call(job_id="hung").json()  # no rule hangs it any more
    assert after["billed"] is True and after["call_id"] > last_id
    assert api.control.stats()["calls"] == 1


def test_healing_a_rule_after_reset_is_harmless(api: ProviderBed) -> None:
    rule = api.control.set_mode("fail")
    api.control.reset()
    rule.heal()  # 404 from the server: already gone, not an error
    assert api.control.modes() == []


def test_bad_control_requests_raise_with_status_and_body(api: ProviderBed) -> None:
    with pytest.raises(PaidAPIError) as caught:
        api.control.ledger(state="sideways")
    assert caught.value.status == 400
    assert "state" in caught.value.body["error"]
    assert "400" in str(caught.value)
    assert isinstance(caught.value, HarnessError)


def test_a_refused_connection_raises() -> None:
    port = free_port()  # claimed, nobody listens
    try:
        with PaidAPIControl(f"http://127.0.0.1:{port}", timeout=1.0) as control:
            with pytest.raises(PaidAPIError) as caught:
                control.health()
        assert caught.value.status is None
        assert isinstance(caught.value.__cause__, httpx.ConnectError)
    finally:
        release_port(port)


def test_a_silent_server_makes_the_client_time_out() -> None:
    # a listening socket that never accepts: the kernel completes the handshake, no one answers
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        with PaidAPIControl(url, timeout=0.2) as control, pytest.raises(PaidAPIError) as caught:
            control.health()
        assert time.monotonic() - started < 5
        assert isinstance(caught.value.__cause__, httpx.TimeoutException)


@pytest.mark.parametrize("header", [{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                                    {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"}])
def test_control_routes_refuse_browsers_but_the_model_route_does_not(api: ProviderBed, header) -> None:
    """A web page must not arm modes or gates; a browser-shaped call to the model route is only a call."""
    refused = api.client.post(f"{api.url}/_jobquake/modes", json={"mode": "hang"}, headers=header)
    assert refused.status_code == 403 and "browsers are refused" in refused.json()["error"]
    assert api.control.modes() == []
    model = api.client.post(f"{api.url}/v1/generate", json={"prompt": "a document"}, headers=header)
    assert model.status_code == 200


def test_ledger_after_lists_only_later_calls(api: ProviderBed) -> None:
    ids = [api.call(job_id=f"j{i}").json()["call_id"] for i in range(3)]
    assert [r["call_id"] for r in api.control.ledger(after=ids[0])] == ids[1:]
    assert api.control.ledger(after=ids[-1]) == []
    assert [r["call_id"] for r in api.control.ledger(after=0)] == ids
