"""OpenAI responses and embeddings, driven with the official ``openai`` client."""
from __future__ import annotations

from typing import Iterator

import openai
import pytest

from tests.common.paidapi import ProviderBed, openai_client, paidapi_testbed


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


@pytest.fixture
def client(api: ProviderBed) -> Iterator[openai.OpenAI]:
    with openai_client(api) as client:
        yield client


def test_a_response_follows_the_schema_and_is_billed(api: ProviderBed, client: openai.OpenAI) -> None:
    response = client.responses.create(model="gpt-4.1-mini", instructions="Classify.",
                                       input="Invoice #12")
    (record,) = api.control.ledger()
    assert (response.object, response.status, response.id) == (
        "response", "completed", f"resp_jq{record['call_id']}")
    assert response.output_text and response.output[0].role == "assistant"
    assert response.usage.input_tokens == record["tokens_in"] == -(-len("Classify.\nInvoice #12") // 4)
    assert response.usage.output_tokens == record["tokens_out"] > 0
    assert (record["format"], record["billed"]) == ("openai.responses", True)


def test_a_streamed_response_sends_typed_events_up_to_completed(client: openai.OpenAI) -> None:
    plain = client.responses.create(model="gpt-4.1-mini", input=[{"role": "user", "content": "x"}])
    events = list(client.responses.create(model="gpt-4.1-mini", stream=True,
                                          input=[{"role": "user", "content": "x"}]))
    kinds = [e.type for e in events]
    assert kinds[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == plain.output_text == events[-1].response.output_text


def test_the_stream_helper_accumulates_the_final_response(client: openai.OpenAI) -> None:
    with client.responses.stream(model="gpt-4.1-mini", input="x") as stream:
        final = stream.get_final_response()
    assert final.status == "completed" and final.output_text


def test_hang_mid_stream_stops_after_the_first_events(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang_mid_stream")
    seen = []
    with openai_client(api, timeout=0.5) as client, pytest.raises(openai.APITimeoutError):
        for event in client.responses.create(model="gpt-4.1-mini", input="x", stream=True):
            seen.append(event.type)
    assert seen[0] == "response.created" and "response.completed" not in seen
    rule.heal()


def test_responses_fail_with_openai_errors(api: ProviderBed, client: openai.OpenAI) -> None:
    api.control.set_mode("fail", status=429)
    with pytest.raises(openai.RateLimitError):
        client.responses.create(model="gpt-4.1-mini", input="x")
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="no-such-model", input="x")


def test_embeddings_are_deterministic_unit_vectors_billed_on_input(
        api: ProviderBed, client: openai.OpenAI) -> None:
    result = client.embeddings.create(model="text-embedding-3-small", input=["a cat", "a dog"])
    again = client.embeddings.create(model="text-embedding-3-small", input="a cat",
                                     encoding_format="float")
    first, second = (d.embedding for d in result.data)
    assert len(first) == 1536 and abs(sum(v * v for v in first) - 1) < 1e-4
    assert first != second and again.data[0].embedding == pytest.approx(first, abs=1e-6)
    record = api.control.ledger()[0]
    assert (record["format"], record["tokens_out"]) == ("openai.embeddings", 0)
    assert result.usage.prompt_tokens == record["tokens_in"] > 0
    assert record["cost_usd"] == pytest.approx(record["tokens_in"] * 0.02 / 1e6)


def test_embedding_dimensions_are_honoured(client: openai.OpenAI) -> None:
    result = client.embeddings.create(model="text-embedding-3-large", input="x", dimensions=8)
    assert len(result.data[0].embedding) == 8


def test_embeddings_hang_until_the_client_times_out(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang", route="/v1/embeddings")
    with openai_client(api, timeout=0.3) as client, pytest.raises(openai.APITimeoutError):
        client.embeddings.create(model="text-embedding-3-small", input="x")
    rule.heal()
