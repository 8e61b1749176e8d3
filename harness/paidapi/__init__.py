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

import importlib
from typing import Any

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

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.paidapi' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
