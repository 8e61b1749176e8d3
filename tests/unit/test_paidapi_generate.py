"""The model route: answers, latency and time scale, request fields, concurrency count."""
from __future__ import annotations

import time
from typing import Iterator

import httpx
import pytest

from harness._wait import wait_until
from harness.paidapi.control import PaidAPIError
from harness.paidapi.provider import CATEGORIES
from tests.common.paidapi import ProviderBed, paidapi_testbed


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


def test_a_call_is_answered_billed_and_recorded(api: ProviderBed) -> None:
    response = api.call("invoice no. 7", job_id="job-1", step="classify", attempt=1)

    assert response.status_code == 200
    body = response.json()
    assert body["output"] in CATEGORIES
    assert body["billed"] is True and body["replayed"] is False
    (record,) = api.control.ledger()
    assert record["call_id"] == body["call_id"]
    assert (record["job_id"], record["step"], record["attempt"]) == ("job-1", "classify", 1)
    assert (record["state"], record["status"], record["billed"]) == ("done", 200, True)
    assert record["mode"] == "normal" and record["client_gone"] is False
    assert record["t_start"] <= record["t_end"] and record["wall_start"] <= record["wall_end"]


def test_output_depends_only_on_the_prompt(api: ProviderBed) -> None:
    first = api.call("same prompt").json()
    second = api.call("same prompt").json()
    assert first["output"] == second["output"]
    assert first["call_id"] != second["call_id"]
    outputs = {api.call(f"prompt {i}").json()["output"] for i in range(30)}
    assert len(outputs) > 1


def test_latency_is_the_profile_times_the_time_scale(api: ProviderBed) -> None:
    api.control.settings(profile="fixed:2")  # 2 s real at scale 0.01: 20 ms
    body = api.call().json()
    assert body["latency"] == pytest.approx(0.02)
    (record,) = api.control.ledger()
    assert record["t_end"] - record["t_start"] >= 0.019  # asyncio timers may fire a hair early

    api.control.settings(time_scale=0.05)
    assert api.call().json()["latency"] == pytest.approx(0.1)


def test_default_profile_is_seeded_and_scaled() -> None:
    def latencies() -> list[float]:
        with paidapi_testbed(profile="default", time_scale=0.0005, seed=42) as bed:
            return [bed.call().json()["latency"] for _ in range(20)]

    first, second = latencies(), latencies()
    assert first == second
    assert len(set(first)) == 20
    assert all(0 < latency <= 660 * 0.0005 for latency in first)


def test_settings_round_trip_and_refuse_bad_values(api: ProviderBed) -> None:
    settings = api.control.settings(seed=9, time_scale=0.5, profile="fixed:3")
    assert settings["seed"] == 9 and settings["time_scale"] == 0.5
    assert settings["profile"]["name"] == "fixed:3"
    assert api.control.settings() == settings
    for bad in ({"profile": "warp"}, {"time_scale": -1}, {"seed": "x"}, {"colour": "red"}):
        with pytest.raises(PaidAPIError) as caught:
            api.control.settings(**bad)
        assert caught.value.status == 400
    assert api.control.settings() == settings  # a refused change changes nothing


def test_fields_come_from_headers_or_from_the_body(api: ProviderBed) -> None:
    body = {"prompt": "p", "job_id": "body-job", "step": "s", "attempt": 3,
            "idempotency_key": "k-body"}
    assert httpx.post(f"{api.url}/v1/generate", json=body, timeout=10).status_code == 200
    headers = {"X-Job-Id": "header-job", "Idempotency-Key": "k-header"}
    assert httpx.post(f"{api.url}/v1/generate", json=body, headers=headers,
                      timeout=10).status_code == 200

    from_body, from_headers = api.control.ledger()
    assert (from_body["job_id"], from_body["step"], from_body["attempt"], from_body["key"]) == (
        "body-job", "s", 3, "k-body")
    assert (from_headers["job_id"], from_headers["key"]) == ("header-job", "k-header")


@pytest.mark.parametrize("request_body, headers", [
    ({"text": "no prompt"}, {}),
    ({"prompt": 12}, {}),
    ({"prompt": "p"}, {"X-Attempt": "second"}),
])
def test_malformed_calls_get_400_and_are_not_recorded(
    api: ProviderBed, request_body: dict, headers: dict
) -> None:
    response = httpx.post(f"{api.url}/v1/generate", json=request_body, headers=headers, timeout=10)
    assert response.status_code == 400
    assert "error" in response.json()
    assert api.control.ledger() == []


def test_every_v1_route_is_a_model_route(api: ProviderBed) -> None:
    assert api.call(route="/v1/classify").status_code == 200
    assert [r["route"] for r in api.control.ledger()] == ["/v1/classify"]


def test_concurrent_calls_are_counted(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="batch")
    calls = [api.call_in_background(job_id="batch") for _ in range(3)]
    wait_until(lambda: len(api.control.ledger(state="held")) == 3, timeout=5, what="3 held calls")
    assert api.control.stats()["in_flight"] == 3

    gate.heal()
    assert [c.result(timeout=10).status_code for c in calls] == [200, 200, 200]
    stats = wait_until(lambda: (s := api.control.stats())["in_flight"] == 0 and s,
                       timeout=5, what="no call in flight")
    assert (stats["max_in_flight"], stats["calls"], stats["billed"]) == (3, 3, 3)


def test_stopping_answers_every_open_call_at_once() -> None:
    with paidapi_testbed(profile="fixed:100000") as bed:  # 1000 s per call at scale 0.01
        bed.control.set_mode("hang", job_id="hung")
        bed.control.gate(job_id="held")
        calls = [bed.call_in_background(job_id=job) for job in ("generating", "hung", "held")]
        for job, state in (("generating", "in_flight"), ("hung", "hung"), ("held", "held")):
            bed.control.wait_for_call(job_id=job, state=state, timeout=5)
        started = time.monotonic()
        bed.server.stop()
        assert [c.result(timeout=5).status_code for c in calls] == [503, 503, 503]
        assert time.monotonic() - started < 2.0


def test_the_caller_pid_header_is_recorded_and_a_malformed_one_is_refused(api: ProviderBed) -> None:
    first = api.client.post(f"{api.url}/v1/generate", json={"prompt": "p"}, headers={"X-Caller-Pid": "4242"})
    second = api.client.post(f"{api.url}/v1/generate", json={"prompt": "p"}, headers={"X-Caller-Pid": "me"})
    third = api.call("p")
    assert second.status_code == 400 and "X-Caller-Pid" in second.text
    pids = {r["call_id"]: r["caller_pid"] for r in api.control.ledger()}
    assert [pids[r.json()["call_id"]] for r in (first, third)] == [4242, None]
