"""A stream opens when generation starts and ends with an error event if generation fails."""
from __future__ import annotations

from typing import Iterator

import anthropic
import openai
import pytest

from tests.common.paidapi import ProviderBed, anthropic_client, openai_client, paidapi_testbed

MESSAGES = [{"role": "user", "content": "a document"}]


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


def test_the_first_chunk_comes_while_the_call_is_still_generating(api: ProviderBed) -> None:
    api.control.settings(profile="fixed:100")  # 1 s at the test time scale
    with openai_client(api) as client:
        stream = iter(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES,
                                                     stream=True))
        first = next(stream)
        (record,) = api.control.ledger()
        assert first.choices[0].delta.role == "assistant"
        assert (record["state"], record["billed"]) == ("in_flight", False)
        text = "".join(c.choices[0].delta.content or "" for c in stream)
    assert text and api.control.ledger()[0]["billed"] is True


def test_a_gated_stream_sends_nothing_until_released(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="g")
    with openai_client(api, timeout=0.3) as client, pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True,
                                       extra_headers={"X-Job-Id": "g"})
    gate.heal()


def test_a_chat_stream_failing_after_it_opened_ends_with_an_error(api: ProviderBed) -> None:
    api.control.set_mode("fail", status=500, immediate=False)
    with openai_client(api) as client:
        stream = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)
        with pytest.raises(openai.APIError) as caught:
            list(stream)
    assert "injected failure" in caught.value.message
    assert api.control.ledger()[0]["billed"] is False


def test_a_responses_stream_failing_after_it_opened_ends_with_response_failed(api: ProviderBed) -> None:
    api.control.set_mode("fail", status=500, immediate=False)
    with openai_client(api) as client:
        events = list(client.responses.create(model="gpt-4.1-mini", input="x", stream=True))
    assert events[0].type == "response.created"
    assert events[-1].type == "response.failed" and events[-1].response.status == "failed"


def test_an_anthropic_stream_failing_after_it_opened_ends_with_an_error_event(api: ProviderBed) -> None:
    api.control.set_mode("fail", status=529, immediate=False)
    seen = []
    with anthropic_client(api) as client, pytest.raises(anthropic.APIStatusError) as caught:
        for event in client.messages.create(model="claude-3-5-haiku-latest", max_tokens=16,
                                            messages=MESSAGES, stream=True):
            seen.append(event.type)
    assert seen[0] == "message_start" and "overloaded_error" in str(caught.value)
