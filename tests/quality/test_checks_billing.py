"""no_double_billing: who could have prevented a duplicate decides its verdict."""
from __future__ import annotations

import pytest

from harness.checks import UNKNOWN, no_double_billing
from harness.history.builder import HistoryBuilder


def retry_after(delivered: bool, same_key: bool, with_key: bool = True) -> HistoryBuilder:
    """Attempt 1 calls and is billed; attempt 2 calls again for the same step and is billed."""
    b = HistoryBuilder()
    first_key = "j1:summarize" if with_key else None
    second_key = first_key if same_key else ("j1:summarize:2" if with_key else None)
    b.call("j1", 0.0, 1.0, attempt=1, step="summarize", key=first_key, client_gone=not delivered)
    b.call("j1", 2.0, 3.0, attempt=2, step="summarize", key=second_key)
    return b


def test_single_billing_per_step_is_valid():
    b = HistoryBuilder()
    b.call("j1", 0.0, 1.0, step="transcribe", key="j1:t")
    b.call("j1", 1.0, 2.0, step="summarize", key="j1:s")
    b.call("j2", 0.0, 1.0, step="transcribe", key="j2:t")
    result = no_double_billing(b.history(), None)
    assert result.valid is True and result.details["billed_calls"] == 3


def test_retry_with_same_key_replayed_is_valid():
    b = HistoryBuilder()
    first = b.call("j1", 0.0, 1.0, attempt=1, key="k", client_gone=True)
    b.call("j1", 2.0, 2.1, attempt=2, key="k", state="replayed", billed=False, replay_of=first)
    assert no_double_billing(b.history(), None).valid is True


def test_same_key_billed_twice_is_invalid():
    result = no_double_billing(retry_after(delivered=False, same_key=True).history(), None)
    assert result.valid is False
    assert "same idempotency key" in result.message


@pytest.mark.parametrize("delivered", [True, False])
def test_new_key_on_retry_is_invalid_when_the_provider_dedups(delivered):
    result = no_double_billing(retry_after(delivered, same_key=False).history(), None)
    assert result.valid is False
    first, second = result.counterexample
    assert (first["call_id"], first["attempt"], first["at"], first["ended_at"]) == ("call-1", 1, 0.0, 1.0)
    assert (second["call_id"], second["attempt"], second["at"]) == ("call-2", 2, 2.0)
    assert first["delivered"] is delivered
    assert "reuse" in result.message


def test_no_dedup_provider_duplicate_after_delivered_result_is_invalid():
    b = retry_after(delivered=True, same_key=False, with_key=False)
    result = no_double_billing(b.history(), None, provider_dedups=False)
    assert result.valid is False
    assert "delivered before the app paid again" in result.message


def test_no_dedup_provider_duplicate_after_undelivered_result_is_ambiguous():
    b = retry_after(delivered=False, same_key=False, with_key=False)
    result = no_double_billing(b.history(), None, provider_dedups=False)
    assert result.valid == UNKNOWN
    assert len(result.counterexample) == 2
    assert result.details["ambiguous"][0]["job_id"] == "j1"


def test_no_dedup_provider_second_call_before_first_delivery_is_ambiguous():
    b = HistoryBuilder()
    b.call("j1", 0.0, 2.0, attempt=1)
    b.call("j1", 1.0, 3.0, attempt=2)  # started while the first was still in flight
    assert no_double_billing(b.history(), None, provider_dedups=False).valid == UNKNOWN


def test_an_invalid_pair_outweighs_an_ambiguous_one():
    b = retry_after(delivered=False, same_key=False, with_key=False)
    b.call("j2", 0.0, 1.0, attempt=1, key="k2")
    b.call("j2", 2.0, 3.0, attempt=2, key="k2")
    result = no_double_billing(b.history(), None, provider_dedups=False)
    assert result.valid is False
    assert result.counterexample[0]["job_id"] == "j2"
    assert len(result.details["ambiguous"]) == 1


def test_unbilled_failures_and_open_calls_are_not_duplicates():
    b = HistoryBuilder()
    b.call("j1", 0.0, 0.1, state="failed", status=500)
    b.call("j1", 1.0, None, state="hung")
    b.call("j1", 2.0, 3.0)
    assert no_double_billing(b.history(), None).valid is True


def test_empty_history_is_valid():
    assert no_double_billing(HistoryBuilder().history(), None).valid is True


def test_a_duplicate_says_what_it_cost():
    b = HistoryBuilder()
    b.call("j1", 0.0, 1.0, attempt=1, step="summarize", key="k1", cost_usd=0.0004)
    b.call("j1", 2.0, 3.0, attempt=2, step="summarize", key="k2", cost_usd=0.00025)
    result = no_double_billing(b.history(), None)
    assert result.valid is False and "duplicate spend $0.00025;" in result.message
    assert result.details["duplicate_spend_usd"] == 0.00025
