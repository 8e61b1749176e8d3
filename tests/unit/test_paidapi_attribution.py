"""Attribution of paid calls: headers, else the idempotency key's pattern, else nothing."""
from __future__ import annotations

import os
from concurrent.futures import Future
from typing import Any, Iterator

import openai
import pytest

from harness.errors import ConfigError
from harness.paidapi.attribution import CallKeyPattern, attribute, default_step
from tests.common.paidapi import ProviderBed, openai_client, paidapi_testbed

MESSAGES = [{"role": "user", "content": "summarise this"}]


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


@pytest.fixture
def client(api: ProviderBed) -> Iterator[openai.OpenAI]:
    with openai_client(api) as client:
        yield client


def chat(client: openai.OpenAI, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES,
                                          extra_headers=headers or {}, **body)


# -- the pattern ---------------------------------------------------------------

def test_a_pattern_reads_job_step_and_attempt() -> None:
    pattern = CallKeyPattern("sum:{job_id}:{step}:a{attempt}")
    assert pattern.match("sum:42:summary:a3") == {"job_id": "42", "step": "summary", "attempt": "3"}
    assert pattern.match("sum:42:summary") is None
    assert pattern.match("other:42:summary:a3") is None


@pytest.mark.parametrize("template", ["sum:{step}", "sum:{job_id}:{job}", "{job_id}{job_id}"])
def test_a_pattern_without_job_id_or_with_unknown_fields_is_refused(template: str) -> None:
    with pytest.raises(ConfigError) as caught:
        CallKeyPattern(template)
    assert caught.value.key == "call_key" and template in str(caught.value)


def test_headers_win_over_the_key_which_fills_what_they_leave_out() -> None:
    labels = {"job_id": "h", "step": None, "attempt": "2"}
    found = attribute(labels, "sum:k:s", CallKeyPattern("sum:{job_id}:{step}"), {"a": 1})
    assert (found.job_id, found.step, found.attempt, found.attributed_by) == ("h", "s", 2, "headers")
    found = attribute(labels, "other", CallKeyPattern("sum:{job_id}:{step}"), {"a": 1})
    assert (found.job_id, found.step, found.attributed_by) == ("h", default_step({"a": 1}), "headers")


def test_the_default_step_ignores_the_stream_flags_and_key_order() -> None:
    assert default_step({"a": 1, "b": [2]}) == default_step(
        {"b": [2], "a": 1, "stream": True, "stream_options": {"include_usage": True}})
    assert default_step({"a": 1}) != default_step({"a": 2})


# -- through the server -----------------------------------------------------------

def test_a_key_matching_the_pattern_attributes_the_call(api: ProviderBed, client: openai.OpenAI) -> None:
    api.control.settings(call_key="sum:{job_id}:{step}")
    chat(client, {"Idempotency-Key": "sum:job-7:summary"})
    (record,) = api.control.ledger()
    assert (record["job_id"], record["step"], record["attributed_by"], record["key"]) == (
        "job-7", "summary", "key", "sum:job-7:summary")


def test_a_configured_header_carries_the_key(api: ProviderBed, client: openai.OpenAI) -> None:
    api.control.settings(call_key="{job_id}/{attempt}", call_key_header="X-Request-Key")
    chat(client, {"X-Request-Key": "job-8/2"})
    (record,) = api.control.ledger()
    assert (record["job_id"], record["attempt"], record["attributed_by"], record["key"]) == (
        "job-8", 2, "key", None)
    assert record["step"].startswith("body-")  # the pattern names no step


def test_a_key_not_matching_is_recorded_unattributed(api: ProviderBed, client: openai.OpenAI) -> None:
    api.control.settings(call_key="sum:{job_id}:{step}")
    chat(client, {"Idempotency-Key": "random-uuid-1234"})
    (record,) = api.control.ledger()
    assert (record["job_id"], record["attributed_by"], record["billed"]) == (None, None, True)


def test_headers_and_caller_pid_are_recorded(api: ProviderBed, client: openai.OpenAI) -> None:
    chat(client, {"X-Job-Id": "j1", "X-Step": "s", "X-Attempt": "1",
                  "X-Caller-Pid": str(os.getpid())})
    (record,) = api.control.ledger()
    assert (record["job_id"], record["step"], record["attempt"], record["caller_pid"],
            record["attributed_by"]) == ("j1", "s", 1, os.getpid(), "headers")


def test_a_bad_caller_pid_is_a_400_naming_the_header(api: ProviderBed, client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        chat(client, {"X-Caller-Pid": "worker-1"})
    assert "X-Caller-Pid" in caught.value.message


def test_a_bad_call_key_setting_is_refused(api: ProviderBed) -> None:
    from harness.paidapi.control import PaidAPIError

    with pytest.raises(PaidAPIError) as caught:
        api.control.settings(call_key="sum:{step}")
    assert caught.value.status == 400 and "call_key" in str(caught.value.body)
    assert api.control.settings()["call_key"] == ""


# -- gates, idempotency and billing, through the official client -----------------

def test_a_gate_holds_a_call_attributed_by_key(api: ProviderBed, client: openai.OpenAI) -> None:
    api.control.settings(call_key="sum:{job_id}:{step}")
    gate = api.control.gate(job_id="job-9", step="summary")
    pending: Future = api.pool.submit(chat, client, {"Idempotency-Key": "sum:job-9:summary"})
    held = gate.wait(timeout=5)
    assert (held["state"], pending.done()) == ("held", False)
    gate.heal()
    assert pending.result(timeout=5).choices[0].message.content
    assert api.record(held["call_id"])["billed"] is True


def test_the_same_idempotency_key_is_billed_once(api: ProviderBed, client: openai.OpenAI) -> None:
    first = chat(client, {"Idempotency-Key": "k1"})
    again = chat(client, {"Idempotency-Key": "k1"})
    assert again.choices[0].message.content == first.choices[0].message.content
    records = api.control.ledger()
    assert [(r["state"], r["billed"]) for r in records] == [("done", True), ("replayed", False)]
    assert records[1]["cost_usd"] == 0.0 and records[0]["cost_usd"] > 0


def test_a_client_that_times_out_is_still_billed_with_its_tokens(api: ProviderBed) -> None:
    api.control.settings(profile="fixed:100")  # 1 s at scale 0.01; the client waits 0.2 s
    with openai_client(api, timeout=0.2) as client, pytest.raises(openai.APITimeoutError):
        chat(client, {"X-Job-Id": "gone"})
    done = api.control.wait_for_call(job_id="gone", state="done", timeout=10)
    assert (done["billed"], done["client_gone"]) == (True, True)
    assert done["tokens_out"] > 0 and done["cost_usd"] > 0


def test_a_streaming_client_gone_mid_generation_is_still_billed(api: ProviderBed) -> None:
    api.control.settings(profile="fixed:100")
    with openai_client(api, timeout=0.2) as client:
        stream = chat(client, {"X-Job-Id": "gone"}, stream=True)  # open: generation started
        with pytest.raises(openai.APITimeoutError):  # the client's read timeout, mid-stream
            list(stream)
    done = api.control.wait_for_call(job_id="gone", state="done", timeout=10)
    assert (done["billed"], done["client_gone"], done["format"]) == (True, True, "openai.chat")


def test_an_embedded_provider_starts_with_the_given_settings() -> None:
    from harness.paidapi.control import PaidAPIControl
    from harness.paidapi.threaded import ThreadedPaidAPI

    with ThreadedPaidAPI(call_key="x:{job_id}", prices={"m": {"input": 1}}) as server, \
            PaidAPIControl(server.url) as control:
        settings = control.settings()
    assert settings["call_key"] == "x:{job_id}"
    assert settings["prices"]["m"] == {"input": 1.0, "output": 0.0}
