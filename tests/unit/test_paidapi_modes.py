"""Mode rules: hang, fail, slow; per job and per route; counts; healing."""
from __future__ import annotations

from concurrent.futures import TimeoutError as FutureTimeout
from typing import Iterator

import httpx
import pytest

from harness._wait import wait_until
from harness.paidapi.control import PaidAPIError
from tests.common.paidapi import ProviderBed, paidapi_testbed

NO_ANSWER_BOUND = 0.3  # seconds a hung call must stay unanswered in these tests


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


def test_hang_accepts_and_never_answers_until_healed(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang")
    pending = api.call_in_background(job_id="j")
    hung = api.control.wait_for_call(job_id="j", state="hung", timeout=5)
    assert hung["mode"] == "hang"
    assert api.control.stats()["in_flight"] == 1
    with pytest.raises(FutureTimeout):
        pending.result(timeout=NO_ANSWER_BOUND)

    rule.heal()
    assert pending.result(timeout=5).status_code == 503
    record = api.record(hung["call_id"])
    assert (record["state"], record["status"], record["billed"]) == ("failed", 503, False)
    assert api.control.modes() == []


def test_hang_with_a_client_timeout_looks_like_a_read_timeout(api: ProviderBed) -> None:
    with api.control.set_mode("hang", job_id="j"):
        with pytest.raises(httpx.ReadTimeout):
            api.call(job_id="j", timeout=NO_ANSWER_BOUND)
        wait_until(lambda: api.control.ledger()[0]["client_gone"], timeout=5,
                   what="the provider sees the client hang up")
    record = api.control.wait_for_call(job_id="j", state="failed", timeout=5)
    assert (record["status"], record["billed"]) == (503, False)


def test_a_counted_hang_rule_hangs_only_the_next_call(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang", count=1)
    first = api.call_in_background(job_id="first")
    api.control.wait_for_call(job_id="first", state="hung", timeout=5)
    assert api.call(job_id="second").status_code == 200
    assert api.control.modes()[0]["remaining"] == 0  # spent, still holding its hung call

    rule.heal()
    assert first.result(timeout=5).status_code == 503


def test_fail_answers_its_status_for_count_calls(api: ProviderBed) -> None:
    api.control.set_mode("fail", status=429, count=2)
    statuses = [api.call(job_id="j").status_code for _ in range(3)]
    assert statuses == [429, 429, 200]
    ledger = api.control.ledger()
    assert [r["state"] for r in ledger] == ["failed", "failed", "done"]
    assert [r["billed"] for r in ledger] == [False, False, True]
    assert ledger[0]["latency"] == 0.0  # immediate: nothing generated


def test_fail_after_latency_takes_the_latency_first(api: ProviderBed) -> None:
    api.control.set_mode("fail", status=503, immediate=False, seconds=5)  # 50 ms scaled
    response = api.call()
    assert response.status_code == 503
    (record,) = api.control.ledger()
    assert record["latency"] == pytest.approx(0.05)
    assert record["t_end"] - record["t_start"] >= 0.049
    assert record["billed"] is False


def test_slow_multiplies_or_replaces_the_latency(api: ProviderBed) -> None:
    with api.control.set_mode("slow", factor=4):
        assert api.call().json()["latency"] == pytest.approx(0.04)
    with api.control.set_mode("slow", seconds=7):
        assert api.call().json()["latency"] == pytest.approx(0.07)
    assert api.call().json()["latency"] == pytest.approx(0.01)
    assert [r["mode"] for r in api.control.ledger()] == ["slow", "slow", "normal"]


def test_a_job_rule_beats_a_route_rule(api: ProviderBed) -> None:
    api.control.set_mode("fail", route="/v1/generate", status=500)
    api.control.set_mode("normal", job_id="vip")
    assert api.call(job_id="vip").status_code == 200
    assert api.call(job_id="other").status_code == 500
    assert api.call(job_id="other", route="/v1/classify").status_code == 200
    api.control.set_mode("fail", job_id="vip", route="/v1/generate", status=418)
    assert api.call(job_id="vip").status_code == 418
    assert api.call(job_id="vip", route="/v1/classify").status_code == 200


def test_among_equal_rules_the_latest_wins(api: ProviderBed) -> None:
    api.control.set_mode("fail", status=500)
    later = api.control.set_mode("fail", status=502)
    assert api.call().status_code == 502
    later.heal()
    assert api.call().status_code == 500
    api.control.clear_modes()
    assert api.call().status_code == 200


def test_clear_modes_answers_hung_calls(api: ProviderBed) -> None:
    api.control.set_mode("hang")
    pending = api.call_in_background(job_id="j")
    api.control.wait_for_call(job_id="j", state="hung", timeout=5)
    api.control.clear_modes()
    assert pending.result(timeout=5).status_code == 503


@pytest.mark.parametrize("mode, options", [
    ("explode", {}),
    ("slow", {}),  # slow needs a factor or seconds
    ("fail", {"status": 42}),
    ("slow", {"factor": -2}),
])
def test_invalid_rules_are_refused_with_400(api: ProviderBed, mode: str, options: dict) -> None:
    with pytest.raises(PaidAPIError) as caught:
        api.control.set_mode(mode, **options)
    assert caught.value.status == 400
    assert "error" in caught.value.body
    assert api.control.modes() == []
