"""OpenAI routes fail the way OpenAI does: the client raises its own exception types."""
from __future__ import annotations

from typing import Iterator

import httpx
import openai
import pytest

from tests.common.paidapi import ProviderBed, openai_client, paidapi_testbed

MESSAGES = [{"role": "user", "content": "a document"}]


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


@pytest.fixture
def client(api: ProviderBed) -> Iterator[openai.OpenAI]:
    with openai_client(api) as client:
        yield client


@pytest.mark.parametrize(("status", "exception", "kind"), [
    (429, openai.RateLimitError, "requests"),
    (500, openai.InternalServerError, "server_error"),
    (503, openai.InternalServerError, "server_error"),
    (401, openai.AuthenticationError, "invalid_request_error"),
])
def test_fail_mode_raises_the_clients_own_error(api: ProviderBed, client: openai.OpenAI,
                                                status: int, exception: type, kind: str) -> None:
    api.control.set_mode("fail", status=status)
    with pytest.raises(exception) as caught:
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert caught.value.status_code == status and caught.value.type == kind
    (record,) = api.control.ledger()
    assert (record["billed"], record["cost_usd"]) == (False, 0.0)


def test_fail_mode_on_a_stream_raises_before_any_chunk(api: ProviderBed, client: openai.OpenAI) -> None:
    api.control.set_mode("fail", status=500)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)


def test_an_unknown_model_is_openais_404(api: ProviderBed, client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-nonexistent", messages=MESSAGES)
    assert caught.value.code == "model_not_found" and "gpt-nonexistent" in caught.value.message
    (record,) = api.control.ledger()  # recorded as refused: a wait on paid calls can name it
    assert record["mode"] == "refused" and record["status"] == 404 and not record["billed"]
    assert record["refused"] == "unknown model 'gpt-nonexistent'" and record["model"] == "gpt-nonexistent"


def test_a_star_price_admits_every_model(api: ProviderBed, client: openai.OpenAI) -> None:
    api.control.settings(prices={"*": {"input": 1.0, "output": 1.0}})
    client.chat.completions.create(model="my-finetune", messages=MESSAGES)
    assert api.control.ledger()[0]["model"] == "my-finetune"


def test_an_unknown_route_is_openais_404(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.post("/chat/nothing", body={}, cast_to=httpx.Response)
    assert "Invalid URL (POST /v1/chat/nothing)" in caught.value.message


def test_a_malformed_body_is_openais_400(api: ProviderBed, client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-4o-mini", messages=[])
    assert "messages" in caught.value.message
    assert api.control.ledger() == []


def test_hang_lets_the_clients_timeout_fire(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang")
    with openai_client(api, timeout=0.3) as client, pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    hung = api.control.wait_for_call(state="hung", timeout=5)
    rule.heal()
    failed = api.control.wait_for_call(state="failed", timeout=5)
    assert (failed["call_id"], failed["billed"], failed["client_gone"]) == (hung["call_id"], False, True)


def test_hang_mid_stream_sends_some_chunks_then_nothing(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang_mid_stream")
    received = []
    with openai_client(api, timeout=0.5) as client, pytest.raises(openai.APITimeoutError):
        for chunk in client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES,
                                                     stream=True):
            received.append(chunk)
    assert received and received[0].choices[0].delta.role == "assistant"
    assert all(c.choices[0].finish_reason is None for c in received)
    record = api.control.wait_for_call(state="hung", timeout=5)
    assert record["billed"] is False
    rule.heal()
    cut = api.control.wait_for_call(state="failed", timeout=5)
    assert (cut["call_id"], cut["billed"], cut["status"]) == (record["call_id"], False, 200)


def test_a_stream_cut_when_healed_breaks_the_clients_read(api: ProviderBed, client: openai.OpenAI) -> None:
    rule = api.control.set_mode("hang_mid_stream")
    stream = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)
    first = next(iter(stream))
    assert first.choices[0].delta.role == "assistant"
    api.control.wait_for_call(state="hung", timeout=5)
    rule.heal()
    with pytest.raises((httpx.RemoteProtocolError, openai.APIError)):
        list(stream)


def test_hang_mid_stream_on_a_plain_answer_sends_half_the_body(api: ProviderBed) -> None:
    api.control.set_mode("hang_mid_stream")
    with openai_client(api, timeout=0.3) as client, pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert api.control.wait_for_call(state="hung", timeout=5)["billed"] is False


def test_slow_mode_delays_the_answer(api: ProviderBed, client: openai.OpenAI) -> None:
    api.control.set_mode("slow", seconds=30)  # 0.3 s at the test time scale
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    (record,) = api.control.ledger()
    assert record["t_end"] - record["t_start"] >= 0.29 and record["billed"] is True


def test_a_provider_route_no_format_serves_is_openais_404(api: ProviderBed, client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.moderations.create(model="omni-moderation-latest", input="x")
    assert "Invalid URL (POST /v1/moderations)" in caught.value.message
    (record,) = api.control.ledger()
    assert record["route"] == "/v1/moderations" and record["mode"] == "refused" and not record["billed"]
