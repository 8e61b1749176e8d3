"""Every mode and gates work the same on every wire format, plain and streamed."""
from __future__ import annotations

from typing import Any, Iterator

import httpx
import pytest

from tests.common.paidapi import ProviderBed, paidapi_testbed

MESSAGES = [{"role": "user", "content": "a document"}]
CALLS = {  # route -> a minimal valid body
    "/v1/generate": {"prompt": "a document"},
    "/v1/chat/completions": {"model": "gpt-4o-mini", "messages": MESSAGES},
    "/v1/responses": {"model": "gpt-4.1-mini", "input": "a document"},
    "/v1/embeddings": {"model": "text-embedding-3-small", "input": "a document"},
    "/v1/messages": {"model": "claude-3-5-haiku-latest", "max_tokens": 16, "messages": MESSAGES},
}
STREAMING = ("/v1/chat/completions", "/v1/responses", "/v1/messages")
VARIANTS = [(route, False) for route in CALLS] + [(route, True) for route in STREAMING]
IDS = [f"{route}{' stream' if stream else ''}" for route, stream in VARIANTS]


@pytest.fixture(scope="module")
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


@pytest.fixture(autouse=True)
def clean(api: ProviderBed) -> None:
    api.control.reset()


def post(api: ProviderBed, route: str, stream: bool, timeout: float = 5.0,
         job_id: str = "j") -> httpx.Response:
    body: dict[str, Any] = {**CALLS[route], **({"stream": True} if stream else {})}
    return api.client.post(f"{api.url}{route}", json=body, headers={"X-Job-Id": job_id},
                           timeout=timeout)


@pytest.mark.parametrize(("route", "stream"), VARIANTS, ids=IDS)
def test_normal_answers_200_and_bills(api: ProviderBed, route: str, stream: bool) -> None:
    response = post(api, route, stream)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(
        "text/event-stream" if stream else "application/json")
    (record,) = api.control.ledger()
    assert (record["billed"], record["tokens_in"] > 0, record["cost_usd"] > 0) == (True, True, True)


@pytest.mark.parametrize(("route", "stream"), VARIANTS, ids=IDS)
def test_fail_answers_the_status_and_bills_nothing(api: ProviderBed, route: str, stream: bool) -> None:
    api.control.set_mode("fail", status=429, route=route)
    response = post(api, route, stream)
    assert response.status_code == 429 and "error" in response.json()
    assert api.control.ledger()[0]["billed"] is False


@pytest.mark.parametrize(("route", "stream"), VARIANTS, ids=IDS)
def test_hang_answers_nothing_until_healed(api: ProviderBed, route: str, stream: bool) -> None:
    rule = api.control.set_mode("hang", route=route)
    with pytest.raises(httpx.ReadTimeout):
        post(api, route, stream, timeout=0.2)
    assert api.control.wait_for_call(state="hung", timeout=5)["billed"] is False
    rule.heal()
    assert api.control.wait_for_call(state="failed", timeout=5)["status"] == 503


@pytest.mark.parametrize(("route", "stream"), VARIANTS, ids=IDS)
def test_hang_mid_stream_sends_part_then_nothing(api: ProviderBed, route: str, stream: bool) -> None:
    rule = api.control.set_mode("hang_mid_stream", route=route)
    received = b""
    with pytest.raises(httpx.ReadTimeout), api.client.stream(
            "POST", f"{api.url}{route}", json={**CALLS[route], "stream": stream},
            timeout=0.3) as response:
        assert response.status_code == 200
        for piece in response.iter_raw():
            received += piece
    assert received  # some of the answer came, not all of it
    assert api.control.wait_for_call(state="hung", timeout=5)["billed"] is False
    rule.heal()
    assert api.control.wait_for_call(state="failed", timeout=5)["billed"] is False


@pytest.mark.parametrize(("route", "stream"), VARIANTS, ids=IDS)
def test_slow_and_gates_delay_the_answer(api: ProviderBed, route: str, stream: bool) -> None:
    api.control.set_mode("slow", seconds=20, route=route)  # 0.2 s at the test time scale
    gate = api.control.gate(job_id="gated")
    pending = api.pool.submit(post, api, route, stream, 5.0, "gated")
    held = gate.wait(timeout=5)
    assert not pending.done()
    gate.heal()
    assert pending.result(timeout=5).status_code == 200
    done = api.record(held["call_id"])
    assert done["billed"] is True and done["t_end"] - done["t_start"] >= 0.19
