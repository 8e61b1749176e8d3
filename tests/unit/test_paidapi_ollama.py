"""Ollama's /api/chat and /api/generate, driven with the official ``ollama`` client (it streams NDJSON)."""
from __future__ import annotations

from typing import Iterator

import httpx
import ollama
import pytest

from tests.common.paidapi import ProviderBed, paidapi_testbed

MODEL = "llama3.1:8b"
MESSAGES = [{"role": "user", "content": "Invoice #12, total $30"}]


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        bed.control.settings(prices={MODEL: {"input": 0.0, "output": 0.0}})
        yield bed


@pytest.fixture
def client(api: ProviderBed) -> ollama.Client:
    return ollama.Client(host=api.url, timeout=5)


def test_a_chat_answers_whole_and_is_billed(api: ProviderBed, client: ollama.Client) -> None:
    answer = client.chat(model=MODEL, messages=MESSAGES, stream=False)
    (record,) = api.control.ledger()
    assert answer.message.role == "assistant" and answer.message.content and answer.done
    assert answer.done_reason == "stop"
    assert answer.prompt_eval_count == record["tokens_in"] and answer.eval_count == record["tokens_out"] > 0
    assert (record["route"], record["format"], record["model"], record["billed"]) == (
        "/api/chat", "ollama.chat", MODEL, True)


def test_a_chat_streams_its_text_then_a_last_line_with_the_counts(api: ProviderBed,
                                                                   client: ollama.Client) -> None:
    parts = list(client.chat(model=MODEL, messages=MESSAGES, stream=True))
    (record,) = api.control.ledger()
    assert len(parts) >= 2 and not any(p.done for p in parts[:-1]) and parts[-1].done
    text = "".join(p.message.content for p in parts)
    assert text and parts[-1].eval_count == record["tokens_out"]


def test_generate_answers_a_prompt_whole_and_streamed(api: ProviderBed, client: ollama.Client) -> None:
    whole = client.generate(model=MODEL, prompt="Classify: invoice #12", stream=False)
    streamed = "".join(p.response for p in client.generate(model=MODEL, prompt="Classify: invoice #12",
                                                           stream=True))
    assert whole.response and whole.done and streamed == whole.response
    assert [r["format"] for r in api.control.ledger()] == ["ollama.generate", "ollama.generate"]


def test_a_model_that_is_not_pulled_is_ollamas_404_and_recorded(api: ProviderBed, client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as caught:
        client.chat(model="nope:1b", messages=MESSAGES, stream=False)
    assert caught.value.status_code == 404 and 'model "nope:1b" not found' in caught.value.error
    (record,) = api.control.ledger()
    assert (record["route"], record["status"], record["mode"], record["billed"]) == ("/api/chat", 404, "refused", False)


def test_a_route_no_format_serves_is_recorded_as_refused(api: ProviderBed) -> None:
    response = httpx.post(f"{api.url}/api/embed", json={"model": MODEL, "input": "x"})
    assert response.status_code == 404 and "does not serve that route" in response.json()["error"]
    (record,) = api.control.ledger()
    assert record["route"] == "/api/embed" and record["refused"].startswith("Invalid URL (POST /api/embed)")


def test_a_failure_mid_stream_is_an_error_line(api: ProviderBed, client: ollama.Client) -> None:
    api.control.set_mode("fail", status=500, immediate=False)
    with pytest.raises(ollama.ResponseError):
        list(client.chat(model=MODEL, messages=MESSAGES, stream=True))


def test_without_a_stream_key_the_server_streams_ndjson_as_ollama_does(api: ProviderBed) -> None:
    response = httpx.post(f"{api.url}/api/chat", json={"model": MODEL, "messages": MESSAGES})
    lines = response.text.splitlines()
    assert response.headers["content-type"].startswith("application/x-ndjson") and len(lines) >= 2
    assert '"done":true' in lines[-1] and all('"done":false' in line for line in lines[:-1])


def test_a_wait_on_paid_calls_that_times_out_names_the_calls_the_fake_refused(api: ProviderBed,
                                                                           client: ollama.Client) -> None:
    from harness.paidapi.control import PaidAPIWaitTimeout

    httpx.post(f"{api.url}/api/embed", json={"model": MODEL, "input": "x"})
    gate = api.control.gate()
    with pytest.raises(PaidAPIWaitTimeout, match=r"1 call\(s\) answered 404 on /api/embed: the fake paid API "
                                                 r"does not serve that route"):
        gate.wait(timeout=0.2)
    with pytest.raises(ollama.ResponseError):
        client.chat(model="nope:1b", messages=MESSAGES, stream=False)
    with pytest.raises(PaidAPIWaitTimeout, match=r"answered 404 on /api/chat: unknown model 'nope:1b': the fake "
                                                 r"paid API does not know it"):
        api.control.wait_for_call(timeout=0.2)
