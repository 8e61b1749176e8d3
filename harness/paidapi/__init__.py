"""A fake paid model provider: slow, billed, sometimes hanging, fully controllable.

The app under test calls it instead of the real provider. Latencies follow
a production-fitted profile scaled by a time scale; rules make it hang,
fail or slow down per route or per job; gates pin a call in flight; a
ledger records every call and whether it was billed. Billing follows real
providers: a call is billed when generation finishes, even if the client
has gone, and an ``Idempotency-Key`` already seen is never billed twice.
Besides its own format it serves OpenAI's and Anthropic's (``formats/``),
so an app using their official clients works unchanged; the ledger records
tokens and their cost by a price table (``pricing.py``), and who each call
was for (``attribution.py``).

Names are loaded on first use so ``python -m harness.paidapi`` starts
without importing the control client's HTTP library.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness._lazy import lazy_exports

if TYPE_CHECKING:
    from harness.paidapi.control import Gate, PaidAPIControl, PaidAPIError, PaidAPIWaitTimeout, Rule
    from harness.paidapi.gates import GateTable
    from harness.paidapi.ledger import CallRecord, Ledger
    from harness.paidapi.modes import ModeTable
    from harness.paidapi.profile import LatencyProfile
    from harness.paidapi.provider import Provider
    from harness.paidapi.server import make_app
    from harness.paidapi.threaded import ThreadedPaidAPI

_EXPORTS: dict[str, str] = {
    "LatencyProfile": "harness.paidapi.profile",
    "Ledger": "harness.paidapi.ledger",
    "CallRecord": "harness.paidapi.ledger",
    "ModeTable": "harness.paidapi.modes",
    "GateTable": "harness.paidapi.gates",
    "Provider": "harness.paidapi.provider",
    "make_app": "harness.paidapi.server",
    "ThreadedPaidAPI": "harness.paidapi.threaded",
    "PaidAPIControl": "harness.paidapi.control",
    "PaidAPIError": "harness.paidapi.control",
    "PaidAPIWaitTimeout": "harness.paidapi.control",
    "Rule": "harness.paidapi.control",
    "Gate": "harness.paidapi.control",
}

__all__ = [
    "CallRecord", "Gate", "GateTable", "LatencyProfile", "Ledger", "ModeTable", "PaidAPIControl", "PaidAPIError",
    "PaidAPIWaitTimeout", "Provider", "Rule", "ThreadedPaidAPI", "make_app",
]

if not TYPE_CHECKING:  # to a type checker an unknown name must stay an error, not Any
    __getattr__ = lazy_exports(__name__, _EXPORTS)
