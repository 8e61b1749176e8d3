"""Anthropic messages, driven with the official ``anthropic`` client."""
from __future__ import annotations

from typing import Iterator

import anthropic
import httpx
import pytest

from tests.common.paidapi import ProviderBed, anthropic_client, paidapi_testbed

MODEL = "claude-3-5-haiku-latest"
MESSAGES = [{"role": "user", "content": "Invoice #12, total $30"}]


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


@pytest.fixture
def client(api: ProviderBed) -> Iterator[anthropic.Anthropic]:
    with anthropic_client(api) as client:
        yield client


def test_a_message_follows_the_schema_and_is_billed(api: ProviderBed, client: anthropic.Anthropic) -> None:
    message = client.messages.create(model=MODEL, max_tokens=64, system="Classify.",
                                     messages=MESSAGES)
    (record,) = api.control.ledger()
    assert (message.type, message.role, message.stop_reason) == ("message", "assistant", "end_turn")
    assert message.id == f"msg_jq{record['call_id']}" and message.content[0].text
    assert message.usage.input_tokens == record["tokens_in"]
    assert message.usage.output_tokens == record["tokens_out"] > 0
    assert (record["format"], record["model"], record["billed"]) == ("anthropic.messages", MODEL, True)
    assert record["cost_usd"] == pytest.approx(
        (record["tokens_in"] * 0.80 + record["tokens_out"] * 4.00) / 1e6)


def test_a_stream_sends_anthropics_events(client: anthropic.Anthropic) -> None:
    plain = client.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)
    events = list(client.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES, stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["message_start", "content_block_start"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    assert text == plain.content[0].text
    assert events[-2].delta.stop_reason == "end_turn"


def test_the_stream_helper_accumulates_the_final_message(client: anthropic.Anthropic) -> None:
    with client.messages.stream(model=MODEL, max_tokens=64, messages=MESSAGES) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "end_turn" and final.content[0].text
    assert final.usage.output_tokens > 0


@pytest.mark.parametrize(("status", "exception"), [
    (429, anthropic.RateLimitError),
    (500, anthropic.InternalServerError),
    (529, anthropic.OverloadedError),
])
def test_fail_mode_raises_the_clients_own_error(api: ProviderBed, client: anthropic.Anthropic,
                                                status: int, exception: type) -> None:
    api.control.set_mode("fail", status=status)
    with pytest.raises(exception) as caught:
        client.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)
    assert caught.value.status_code == status
    assert caught.value.body["type"] == "error"


def test_an_unknown_model_and_route_are_anthropics_404(api: ProviderBed,
                                                       client: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.create(model="claude-nonexistent", max_tokens=64, messages=MESSAGES)
    assert caught.value.body["error"] == {"type": "not_found_error",
                                          "message": "model: claude-nonexistent"}
    with pytest.raises(anthropic.NotFoundError):
        client.post("/v1/nothing/here", body={}, cast_to=httpx.Response)
    refused = api.control.ledger()
    assert [(r["route"], r["status"], r["mode"], r["billed"]) for r in refused] == [
        ("/v1/messages", 404, "refused", False), ("/v1/nothing/here", 404, "refused", False)]


def test_a_missing_max_tokens_is_a_400(api: ProviderBed) -> None:
    response = api.client.post(f"{api.url}/v1/messages", json={"model": MODEL, "messages": MESSAGES})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in response.json()["error"]["message"]


def test_hang_lets_the_clients_timeout_fire(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang")
    with anthropic_client(api, timeout=0.3) as client, pytest.raises(anthropic.APITimeoutError):
        client.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)
    rule.heal()


def test_hang_mid_stream_stops_after_the_first_events(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang_mid_stream")
    seen = []
    # once the stream is open the client lets its HTTP library's ReadTimeout through
    with anthropic_client(api, timeout=0.5) as client, pytest.raises(Exception) as caught:
        for event in client.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES,
                                            stream=True):
            seen.append(event.type)
    assert "Timeout" in type(caught.value).__name__
    assert seen[0] == "message_start" and "message_stop" not in seen
    assert api.control.wait_for_call(state="hung", timeout=5)["billed"] is False
    rule.heal()
