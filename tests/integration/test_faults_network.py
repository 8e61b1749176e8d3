"""HangEndpoint at both layers, network toxics and a proxy that is down, through the real proxy."""
from __future__ import annotations

import time

import httpx
import pytest

from harness._wait import wait_until
from harness.checks import UNKNOWN
from harness.checks.landed import faults_landed
from harness.errors import FaultError
from harness.proxy.toxics import ATTRIBUTES
from tests.common.tiny import job_state, submit

pytestmark = pytest.mark.integration


def completes(run, job_id: str) -> None:
    submit(run, job_id)
    wait_until(lambda: job_state(run, job_id) == "done", timeout=20, what=f"{job_id} done")


def generate(run, job_id: str, timeout: float = 0.5) -> httpx.Response:
    """One paid call through the proxy, as the app makes it."""
    return httpx.post(run.values["paidapi_url"] + "/v1/generate", json={"prompt": job_id}, timeout=timeout,
                      headers={"Idempotency-Key": f"{job_id}:label", "X-Job-Id": job_id, "X-Step": "label"})


def health(run, timeout: float = 2.0) -> float:
    """Seconds a control call takes through the paid API's proxy."""
    start = time.monotonic()
    httpx.get(run.values["paidapi_url"] + "/_jobquake/health", timeout=timeout).raise_for_status()
    return time.monotonic() - start


def test_provider_hang_answers_nothing_and_bills_nothing(tiny):
    hang = tiny.faults.hang_endpoint(layer="provider", job_id="h1")
    with pytest.raises(httpx.ReadTimeout):
        generate(tiny, "h1")
    [call] = tiny.paidapi.ledger("h1")
    assert call["state"] == "hung" and not call["billed"]
    hang.heal()
    assert tiny.paidapi.ledger("h1")[0]["status"] == 503  # the hung call was answered at heal
    completes(tiny, "after-provider-hang")


def test_provider_hang_mid_stream_sends_half_an_answer_and_bills_nothing(tiny):
    hang = tiny.faults.hang_endpoint(layer="provider", job_id="m1", mid_stream=True)
    with pytest.raises(httpx.ReadTimeout):
        generate(tiny, "m1")
    call = tiny.paidapi.wait_for_call(job_id="m1", state="hung", timeout=5)
    assert (call["mode"], call["status"], call["billed"]) == ("hang_mid_stream", None, False)
    hang.heal()
    cut = tiny.paidapi.wait_for_call(job_id="m1", state="failed", timeout=5)
    assert (cut["status"], cut["billed"]) == (200, False)  # headers were sent; the body never ended
    completes(tiny, "after-mid-stream-hang")


def test_network_hang_drops_the_answer_of_a_call_the_provider_billed(tiny):
    hang = tiny.faults.hang_endpoint(layer="network")
    with pytest.raises(httpx.ReadTimeout):
        generate(tiny, "n1", timeout=1.0)
    call = tiny.paidapi.wait_for_call(job_id="n1", state="billed", timeout=10)
    assert call["status"] == 200  # the work was done and billed; the client never heard
    hang.heal()
    assert tiny.proxy.get_proxy("paidapi").toxics() == {}
    completes(tiny, "after-network-hang")


def test_network_hang_cannot_target_a_job(tiny):
    with pytest.raises(FaultError, match="sees bytes"):
        tiny.faults.hang_endpoint(layer="network", job_id="x")


def test_latency_toxic_delays_every_answer(tiny):
    toxic = tiny.faults.network_toxic("paidapi", "latency", latency=400)
    assert health(tiny) >= 0.4
    toxic.heal()
    assert health(tiny) < 0.4
    # no paid call was made, but the proxy counted the health check's bytes through the toxic
    landed = faults_landed(tiny.history.events(), None)
    assert landed.valid is True and "network_toxic on paidapi: " in landed.message
    assert "byte(s) went through it while it was set" in landed.message


def test_a_toxic_no_byte_went_through_did_not_land(tiny):
    tiny.faults.network_toxic("paidapi", "latency", latency=400).heal()
    landed = faults_landed(tiny.history.events(), None)
    assert landed.valid == UNKNOWN and "no byte went through it while it was" in landed.message


def test_reset_peer_toxic_cuts_connections(tiny):
    toxic = tiny.faults.network_toxic("paidapi", "reset_peer", stream="upstream", timeout=0)
    with pytest.raises(httpx.TransportError):
        health(tiny)
    toxic.heal()
    health(tiny)


def test_limit_data_toxic_truncates_the_answer(tiny):
    toxic = tiny.faults.network_toxic("paidapi", "limit_data", bytes=20)
    with pytest.raises(httpx.TransportError):
        health(tiny)
    toxic.heal()
    health(tiny)


@pytest.mark.parametrize("kind", sorted(ATTRIBUTES))
def test_every_toxic_type_is_applied_as_given_and_removed_by_heal(tiny, kind):
    attributes = {name: 1 for name in ATTRIBUTES[kind]}
    if kind == "slicer":
        attributes["average_size"] = 2  # the variation must stay below the average
    toxic = tiny.faults.network_toxic("paidapi", kind, stream="downstream", toxicity=0.5, **attributes)
    [shown] = tiny.proxy.get_proxy("paidapi").toxics().values()
    assert (shown.type, shown.toxicity, shown.attributes) == (kind, 0.5, attributes)
    toxic.heal()
    assert tiny.proxy.get_proxy("paidapi").toxics() == {}


def test_proxy_down_refuses_connections_until_healed(tiny):
    down = tiny.faults.inject_spec({"fault": "proxy_down", "proxy": "paidapi"})  # as a config file says it
    assert tiny.faults.specs() == [{"fault": "proxy_down", "proxy": "paidapi"}]
    with pytest.raises(httpx.ConnectError):
        health(tiny)
    down.heal()
    health(tiny)
    completes(tiny, "after-proxy-down")


def test_unknown_proxy_and_bad_toxics_raise_fault_errors(tiny):
    with pytest.raises(FaultError, match="no proxy 'postgres'"):  # the config proxies only the paid API
        tiny.faults.proxy_down("postgres")
    with pytest.raises(FaultError, match="unknown toxic type 'jitter'"):
        tiny.faults.network_toxic("paidapi", "jitter")
    with pytest.raises(FaultError, match="has no attribute rate"):
        tiny.faults.network_toxic("paidapi", "latency", rate=3)
