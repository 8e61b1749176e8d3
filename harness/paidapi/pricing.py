"""Tokens and money: how the fake provider turns a call into an invoice line.

Tokens are counted deterministically from the text, one token per 4
characters started (``ceil(len(text) / 4)``), roughly what the providers'
tokenizers give for English. The price table maps a model name to dollars
per million input and output tokens; the built-in list prices below can be
overridden and extended with the ``paidapi_prices`` config table, where
``"*"`` prices (and so admits) every model not named.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from harness.errors import ConfigError
from harness.setting_checks import checks_setting

CHARS_PER_TOKEN = 4
ANY_MODEL = "*"
# The model name calls in jobquake's own format are billed under.
JOBQUAKE_MODEL = "jobquake"


def count_tokens(text: str) -> int:
    """Tokens in ``text``: one per 4 characters started."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens."""

    input: float
    output: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """The dollars ``tokens_in`` + ``tokens_out`` cost."""
        return (tokens_in * self.input + tokens_out * self.output) / 1_000_000


# List prices (USD per million tokens) of common models; the config overrides them.
DEFAULT_PRICES: dict[str, Price] = {
    JOBQUAKE_MODEL: Price(1.00, 2.00),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "gpt-3.5-turbo": Price(0.50, 1.50),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    "text-embedding-3-small": Price(0.02, 0.0),
    "text-embedding-3-large": Price(0.13, 0.0),
    "text-embedding-ada-002": Price(0.10, 0.0),
    "claude-3-haiku-20240307": Price(0.25, 1.25),
    "claude-3-5-haiku-latest": Price(0.80, 4.00),
    "claude-3-5-haiku-20241022": Price(0.80, 4.00),
    "claude-3-7-sonnet-latest": Price(3.00, 15.00),
    "claude-sonnet-4-20250514": Price(3.00, 15.00),
    "claude-sonnet-4-5": Price(3.00, 15.00),
    "claude-haiku-4-5": Price(1.00, 5.00),
    "claude-opus-4-1": Price(15.00, 75.00),
}


class PriceTable:
    """Known models and their prices; a model absent from it is unknown (404)."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices = dict(DEFAULT_PRICES if prices is None else prices)

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | None) -> PriceTable:
        """The defaults overridden by ``{model: {input, output}}``; ConfigError naming the model."""
        prices = dict(DEFAULT_PRICES)
        for model, spec in (table or {}).items():
            prices[str(model)] = _price(str(model), spec)
        return cls(prices)

    def knows(self, model: str) -> bool:
        """True when calls to ``model`` are served."""
        return model in self._prices or ANY_MODEL in self._prices

    def cost(self, model: str, tokens_in: int, tokens_out: int) -> float:
        """Dollars for one call; 0 for a model the table does not price."""
        price = self._prices.get(model) or self._prices.get(ANY_MODEL)
        return 0.0 if price is None else price.cost(tokens_in, tokens_out)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The JSON form (``paidapi_prices`` shape)."""
        return {m: {"input": p.input, "output": p.output} for m, p in self._prices.items()}



@checks_setting("paidapi_prices")
def prices_problem(table: Mapping[str, Any]) -> str | None:
    """Why ``table`` cannot be a ``paidapi_prices`` table; None when it can."""
    try:
        PriceTable.from_config(table)
    except ConfigError as exc:
        return str(exc)
    return None

def _price(model: str, spec: Any) -> Price:
    key = f"paidapi_prices.{model}"
    if not isinstance(spec, Mapping) or set(spec) - {"input", "output"}:
        raise ConfigError(f"{key} must be a table {{input = <$/M tokens>, output = <$/M tokens>}}, "
                          f"got {spec!r}", key=key)
    try:
        price = Price(float(spec.get("input", 0.0)), float(spec.get("output", 0.0)))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key}: prices must be numbers, got {spec!r}", key=key) from exc
    if price.input < 0 or price.output < 0:
        raise ConfigError(f"{key}: prices must not be negative, got {spec!r}", key=key)
    return price
