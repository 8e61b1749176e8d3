"""Gates hold matching calls before generation until healed."""
from __future__ import annotations

from typing import Iterator

import pytest

from harness.errors import WaitTimeout
from harness.paidapi.control import PaidAPIError, PaidAPIWaitTimeout
from tests.common.paidapi import ProviderBed, paidapi_testbed


@pytest.fixture
def api() -> Iterator[ProviderBed]:
    with paidapi_testbed() as bed:
        yield bed


def test_a_gate_holds_a_call_until_released(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="j")
    pending = api.call_in_background(job_id="j")
    held = gate.wait(timeout=5)
    assert (held["state"], held["billed"], held["job_id"]) == ("held", False, "j")
    assert not pending.done()
    assert api.control.wait_for_call(job_id="j", state="held", timeout=1)["call_id"] == held["call_id"]

    gate.heal()
    assert pending.result(timeout=5).status_code == 200
    record = api.record(held["call_id"])
    assert (record["state"], record["billed"]) == ("done", True)


def test_a_gate_holds_only_what_it_matches(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="j", step="summarise")
    assert api.call(job_id="j", step="classify").status_code == 200
    assert api.call(job_id="other", step="summarise").status_code == 200
    pending = api.call_in_background(job_id="j", step="summarise")
    held = gate.wait(timeout=5)
    assert held["step"] == "summarise"
    gate.heal()
    assert pending.result(timeout=5).status_code == 200


def test_a_route_gate_holds_that_route_only(api: ProviderBed) -> None:
    gate = api.control.gate(route="/v1/embed")
    assert api.call(route="/v1/generate").status_code == 200
    pending = api.call_in_background(route="/v1/embed")
    assert gate.wait(timeout=5)["route"] == "/v1/embed"
    gate.heal()
    assert pending.result(timeout=5).status_code == 200


def test_a_released_gate_stays_open(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="j")
    pending = api.call_in_background(job_id="j")
    gate.wait(timeout=5)
    # the control API's release (no client verb: a scenario heals its gate)
    assert api.client.post(f"{api.url}/_jobquake/gates/{gate.gate_id}/release").status_code == 200
    pending.result(timeout=5)
    assert api.call(job_id="j").status_code == 200  # not held: answered directly
    (listed,) = api.control.gates()
    assert listed["open"] is True and len(listed["held"]) == 1


def test_leaving_the_with_block_releases_and_removes_the_gate(api: ProviderBed) -> None:
    with api.control.gate(job_id="j") as gate:
        pending = api.call_in_background(job_id="j")
        gate.wait(timeout=5)
    assert pending.result(timeout=5).status_code == 200
    assert api.control.gates() == []
    gate.heal()  # idempotent


def test_waiting_for_a_gate_that_holds_nothing_times_out(api: ProviderBed) -> None:
    gate = api.control.gate(job_id="nobody")
    with pytest.raises(PaidAPIWaitTimeout) as caught:
        gate.wait(timeout=0.1)
    assert caught.value.status == 408
    assert isinstance(caught.value, WaitTimeout)


def test_unknown_gates_are_404(api: ProviderBed) -> None:
    gate = api.control.gate()
    gate.heal()
    assert api.client.post(f"{api.url}/_jobquake/gates/{gate.gate_id}/release").status_code == 404
    with pytest.raises(PaidAPIError):
        gate.wait(timeout=0.1)


def test_gate_fields_are_checked(api: ProviderBed) -> None:
    response = api.client.post(f"{api.url}/_jobquake/gates", json={"colour": "red"})
    assert response.status_code == 400
