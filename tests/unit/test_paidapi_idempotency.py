"""Idempotency-Key: the provider never bills one key twice, like a well-behaved provider."""
from __future__ import annotations

from typing import Iterator

import httpx
import pytest

from tests.common.paidapi import ProviderBed, paidapi_testbed


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


def test_same_key_replays_the_result_and_bills_once(api: ProviderBed) -> None:
    first = api.call("contract text", job_id="j", key="j:classify").json()
    second = api.call("contract text", job_id="j", key="j:classify").json()

    assert second["output"] == first["output"]
    assert (second["replayed"], second["billed"]) == (True, False)
    assert [r["call_id"] for r in api.control.billed("j")] == [first["call_id"]]
    replay = api.record(second["call_id"])
    assert (replay["state"], replay["replay_of"], replay["billed"]) == (
        "replayed", first["call_id"], False)


def test_concurrent_calls_with_one_key_share_one_generation(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="j")
    first = api.call_in_background("p", job_id="j", key="k")
    original = gate.wait(timeout=5)
    second = api.call_in_background("p", job_id="j", key="k")
    waiting = api.control.wait_for_call(job_id="j", state="in_flight", after=original["call_id"],
                                        timeout=5)
    assert waiting["replay_of"] == original["call_id"]

    # released, not healed: the gate stays listed with what it held
    api.client.post(f"{api.url}/_jobquake/gates/{gate.gate_id}/release").raise_for_status()
    first_body, second_body = first.result(timeout=10).json(), second.result(timeout=10).json()
    assert first_body["output"] == second_body["output"]
    assert second_body["replayed"] is True
    assert len(api.control.billed("j")) == 1
    assert api.control.gates()[0]["held"] == [original["call_id"]]  # only one generation
    assert api.record(waiting["call_id"])["state"] == "replayed"


def test_calls_without_a_key_are_each_billed(api: ProviderBed) -> None:
    bodies = [api.call("same prompt", job_id="j").json() for _ in range(3)]
    assert all(b["billed"] and not b["replayed"] for b in bodies)
    assert len(api.control.billed("j")) == 3


def test_different_keys_are_different_generations(api: ProviderBed) -> None:
    api.call("p", job_id="j", key="attempt-1")
    api.call("p", job_id="j", key="attempt-2")
    assert len(api.control.billed("j")) == 2


def test_a_failed_generation_leaves_the_key_free(api: ProviderBed) -> None:
    api.control.set_mode("fail", status=502, count=1)
    assert api.call(key="k").status_code == 502
    retry = api.call(key="k").json()
    assert (retry["billed"], retry["replayed"]) == (True, False)
    assert api.record(retry["call_id"])["replay_of"] is None


def test_a_call_waiting_on_a_failing_generation_fails_too(api: ProviderBed) -> None:
    api.control.set_mode("fail", status=500, count=1, immediate=False)
    gate = api.control.gate(job_id="j")
    first = api.call_in_background(job_id="j", key="k")
    original = gate.wait(timeout=5)
    second = api.call_in_background(job_id="j", key="k")
    api.control.wait_for_call(job_id="j", after=original["call_id"], timeout=5)

    gate.heal()
    assert (first.result(timeout=10).status_code, second.result(timeout=10).status_code) == (500, 500)
    assert api.control.billed() == []
    assert [r["replay_of"] for r in api.control.ledger()] == [None, original["call_id"]]


def test_a_stalled_generation_frees_its_key(api: ProviderBed) -> None:
    rule = api.control.set_mode("hang_mid_stream", count=1)
    with pytest.raises(httpx.ReadTimeout):
        api.call(key="k", timeout=0.3)
    retry = api.call(key="k")
    assert retry.status_code == 200 and retry.json()["billed"] is True
    rule.heal()
    api.control.wait_for_call(state="failed", timeout=5)
    states = [(r["state"], r["billed"]) for r in api.control.ledger()]
    assert states == [("failed", False), ("done", True)]
