"""The fake paid model API as a local process (see ``harness.paidapi``)."""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from harness.stack.probe_http import probe_client
from harness.stack.process import ProcessService

if TYPE_CHECKING:
    from harness.paidapi.control import PaidAPIControl


class PaidAPIService(ProcessService):
    """``python -m harness.paidapi``: latency profile, modes, gates and the billing ledger."""

    scheme = "http"
    start_timeout = 15.0

    def __init__(self, *args: Any, seed: int, time_scale: float, profile: str = "default",
                 call_key: str = "", call_key_header: str = "Idempotency-Key",
                 prices: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.seed = seed
        self.time_scale = time_scale
        self.profile = profile
        self.call_key = call_key
        self.call_key_header = call_key_header
        self.prices = prices or {}

    def command(self) -> list[str]:
        return [sys.executable, "-m", "harness.paidapi", "--host", self.host, "--port", str(self.port),
                "--seed", str(self.seed), "--time-scale", str(self.time_scale), "--profile", self.profile,
                "--call-key", self.call_key, "--call-key-header", self.call_key_header,
                "--prices", json.dumps(self.prices)]

    def probe(self) -> bool:
        return probe_client().get(f"{self.url}/_jobquake/health").is_success

    def control(self) -> PaidAPIControl:
        """A client of this service, made once and reused (each holds a connection pool)."""
        if getattr(self, "_control", None) is None:
            from harness.paidapi.control import PaidAPIControl

            self._control = PaidAPIControl(self.url)
        return self._control
