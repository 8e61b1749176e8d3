"""OpenAI chat completions, driven with the official ``openai`` client."""
from __future__ import annotations

from typing import Iterator

import openai
import pytest

from tests.common.paidapi import ProviderBed, openai_client, paidapi_testbed

MESSAGES = [{"role": "system", "content": "Classify the document."},
            {"role": "user", "content": "Invoice #12, total $30"}]


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


@pytest.fixture
def client(api: ProviderBed) -> Iterator[openai.OpenAI]:
    with openai_client(api) as client:
        yield client


def test_a_completion_follows_the_schema_and_is_billed_in_tokens(
        api: ProviderBed, client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    (choice,) = completion.choices
    (record,) = api.control.ledger()
    assert completion.object == "chat.completion" and completion.model == "gpt-4o-mini"
    assert completion.id == f"chatcmpl-jq{record['call_id']}"
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    assert choice.message.content  # the category the fake model picks
    prompt = "Classify the document.\nInvoice #12, total $30"
    assert completion.usage.prompt_tokens == record["tokens_in"] == -(-len(prompt) // 4)
    assert completion.usage.completion_tokens == record["tokens_out"] == -(-len(choice.message.content) // 4)
    assert (record["format"], record["model"], record["billed"]) == ("openai.chat", "gpt-4o-mini", True)
    expected = (record["tokens_in"] * 0.15 + record["tokens_out"] * 0.60) / 1e6
    assert record["cost_usd"] == pytest.approx(expected)


def test_the_same_messages_get_the_same_answer(client: openai.OpenAI) -> None:
    first = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    second = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert first.choices[0].message.content == second.choices[0].message.content


def test_a_stream_sends_the_text_in_chunks_and_ends_with_done(
        api: ProviderBed, client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    chunks = list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES,
                                                 stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.object == "chat.completion.chunk" and c.usage is None for c in chunks)
    streamed = api.control.ledger()[-1]
    assert (streamed["billed"], streamed["tokens_out"]) == (True, plain.usage.completion_tokens)


def test_include_usage_adds_a_last_chunk_with_the_usage(client: openai.OpenAI) -> None:
    chunks = list(client.chat.completions.create(
        model="gpt-4o-mini", messages=MESSAGES, stream=True,
        stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
    assert chunks[-2].choices[0].finish_reason == "stop"


def test_the_stream_flag_does_not_change_the_default_step(
        api: ProviderBed, client: openai.OpenAI) -> None:
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True))
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES[1:])
    steps = [r["step"] for r in api.control.ledger()]
    assert steps[0] == steps[1] != steps[2] and steps[0].startswith("body-")
    assert all(r["job_id"] is None and r["attributed_by"] is None for r in api.control.ledger())
